"""Boot counter that survives power loss (SPEC: `boot` rises across power loss; NVS on the
device, DESIGN §4: NVS is for small settings and counters).

Interface (stable):
    boot_count(hw) -> int   increments the persisted counter once per boot (the first call
                            in a boot) and returns it; later calls return the same value.
First boot ever returns 1. The value is committed before it is returned, so it is durable
before the first message of the boot uses it. NVS stores i32: wraps past 2**31-1 to 1
(at one boot a minute that is 4000 years).
"""

KEY = "boot"


def boot_count(hw):
    b = getattr(hw, "_rb_boot", None)
    if b is None:
        b = (hw.nvs_get(KEY, 0) or 0) + 1
        if b > 0x7FFFFFFF:
            b = 1
        hw.nvs_set(KEY, b)
        hw._rb_boot = b  # once per boot: a Hardware object lives exactly one boot
    return b
