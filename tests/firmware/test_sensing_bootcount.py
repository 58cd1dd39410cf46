"""Boot counter survives restart (sim NVS file), once per boot."""

from rbnode.bootcount import boot_count
from rbnode.hw.sim import SimHardware


def test_boot_counter_rises_across_boots(tmp_path):
    root = str(tmp_path)
    seen = []
    for _ in range(5):
        hw = SimHardware(fs_root=root)  # a new board object = a new boot
        b = boot_count(hw)
        assert boot_count(hw) == b  # once per boot
        seen.append(b)
    assert seen == [1, 2, 3, 4, 5]
    assert SimHardware(fs_root=root).nvs_get("boot") == 5
