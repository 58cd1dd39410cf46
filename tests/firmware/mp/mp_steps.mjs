// Like tests/harness/mp_run.mjs, but runs MAIN.py in steps: the file is split at lines
// "#--step--" and each part is a separate runPython call sharing one global namespace.
// Why: in the WebAssembly port gc.collect() only reclaims garbage when it runs at the top
// level between runPython calls (inside one call the stack scan keeps everything alive),
// so a heap figure must be taken in a step of its own.
// usage: node mp_steps.mjs [--heap BYTES] [--path DIR]... MAIN.py
import { createRequire } from "node:module";
import fs from "node:fs";
import path from "node:path";

const require = createRequire(path.join(process.cwd(), "package.json"));
const { loadMicroPython } = await import(
  require.resolve("@micropython/micropython-webassembly-pyscript"));

const args = process.argv.slice(2);
let heap = 4 * 1024 * 1024;
const paths = [];
let main = null;
for (let i = 0; i < args.length; i++) {
  if (args[i] === "--heap") heap = parseInt(args[++i], 10);
  else if (args[i] === "--path") paths.push(args[++i]);
  else main = args[i];
}
if (!main) { process.stderr.write("usage: mp_steps.mjs [--heap N] [--path DIR]... MAIN.py\n"); process.exit(2); }
const out = (s) => process.stdout.write(s + "\n");
const err = (s) => process.stderr.write(s + "\n");
const mp = await loadMicroPython({ heapsize: heap, stdout: out, stderr: err });

function copyTree(src, dst) {
  try { mp.FS.mkdir(dst); } catch (e) { /* exists */ }
  for (const ent of fs.readdirSync(src, { withFileTypes: true })) {
    const s = path.join(src, ent.name), d = dst + "/" + ent.name;
    if (ent.isDirectory()) { if (ent.name !== "__pycache__" && !ent.name.startsWith(".") && ent.name !== "build") copyTree(s, d); }
    else if (ent.name.endsWith(".py") || ent.name.endsWith(".mpy") || ent.name.endsWith(".json")) mp.FS.writeFile(d, fs.readFileSync(s));
  }
}
const libs = [];
paths.forEach((p, n) => { const d = "/lib-" + n; copyTree(p, d); libs.push(d); });
const setup = "import sys\n" + libs.map((d) => `sys.path.append(${JSON.stringify(d)})\n`).join("");
// "#--step-- wait=MS" lets the JS event loop (which drives asyncio here) run MS ms first.
const parts = fs.readFileSync(main, "utf8").split(/^#--step--(.*)$/m);
const steps = [[0, parts[0]]];
for (let i = 1; i < parts.length; i += 2) {
  const m = /wait=(\d+)/.exec(parts[i]);
  steps.push([m ? parseInt(m[1], 10) : 0, parts[i + 1]]);
}
try {
  mp.runPython(setup);
  for (const [wait, s] of steps) {
    await new Promise((r) => setTimeout(r, wait));
    mp.runPython(s);
  }
} catch (e) {
  err(String(e && e.message ? e.message : e));
  process.exit(1);
}
process.exit(0);
