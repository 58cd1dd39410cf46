// Run a MicroPython program in the real MicroPython WebAssembly port under Node.
//
// usage: node mp_run.mjs [--heap BYTES] [--path DIR]... MAIN.py
// Every .py/.mpy/.json file below each --path DIR (keeping sub-directories, so packages
// work; `build` and hidden directories skipped) is written to the MicroPython file system at
// /lib-<n>/ and put on sys.path; MAIN.py runs as __main__. Exit status: 0 when MAIN.py
// finished, 1 on an uncaught Python exception (its traceback goes to stderr), 2 on a usage
// error.
//
// Steps: MAIN.py may be split at lines "# --step--" (optionally "# --step-- wait=MS"); each
// part is a separate top-level runPython call sharing one global namespace, after letting
// the JS event loop (which drives asyncio here) run MS ms. Why: in the WebAssembly port
// gc.collect() only reclaims garbage when it runs at the top level between runPython calls
// (inside one call the stack scan keeps everything alive), so a heap figure must be taken
// in a step of its own.
import { loadMicroPython } from "@micropython/micropython-webassembly-pyscript";
import fs from "node:fs";
import path from "node:path";

const args = process.argv.slice(2);
let heap = 4 * 1024 * 1024;
const paths = [];
let main = null;
for (let i = 0; i < args.length; i++) {
  if (args[i] === "--heap") heap = parseInt(args[++i], 10);
  else if (args[i] === "--path") paths.push(args[++i]);
  else main = args[i];
}
if (!main) { process.stderr.write("usage: mp_run.mjs [--heap N] [--path DIR]... MAIN.py\n"); process.exit(2); }

const out = (s) => process.stdout.write(s + "\n");
const err = (s) => process.stderr.write(s + "\n");
const mp = await loadMicroPython({ heapsize: heap, stdout: out, stderr: err });

function copyTree(src, dst) {
  try { mp.FS.mkdir(dst); } catch (e) { /* exists */ }
  for (const ent of fs.readdirSync(src, { withFileTypes: true })) {
    const s = path.join(src, ent.name), d = dst + "/" + ent.name;
    if (ent.isDirectory()) { if (ent.name !== "__pycache__" && !ent.name.startsWith(".") && ent.name !== "build") copyTree(s, d); }
    else if (/\.(py|mpy|json)$/.test(ent.name)) mp.FS.writeFile(d, fs.readFileSync(s));
  }
}
const libs = [];
paths.forEach((p, n) => { const d = "/lib-" + n; copyTree(p, d); libs.push(d); });
const setup = "import sys\n" + libs.map((d) => `sys.path.append(${JSON.stringify(d)})\n`).join("");
const parts = fs.readFileSync(main, "utf8").split(/^# ?--step--(.*)$/m);
const steps = [[0, parts[0]]];
for (let i = 1; i < parts.length; i += 2) {
  const m = /wait=(\d+)/.exec(parts[i]);
  // Pad with blank lines so tracebacks give line numbers of MAIN.py itself.
  const before = parts.slice(0, i + 1).join("\n").split("\n").length - 1;
  steps.push([m ? parseInt(m[1], 10) : 0, "\n".repeat(before) + parts[i + 1]]);
}
const name = JSON.stringify(path.basename(main));
try {
  mp.runPython(setup + "__rb_globals = {'__name__': '__main__'}\n");
  for (let n = 0; n < steps.length; n++) {
    const [wait, src] = steps[n];
    if (wait) await new Promise((r) => setTimeout(r, wait));
    mp.FS.writeFile(`/__step_${n}__.py`, src);
    mp.runPython(`exec(compile(open('/__step_${n}__.py').read(), ${name}, 'exec'), __rb_globals)`);
  }
} catch (e) {
  err(String(e && e.message ? e.message : e));
  process.exit(1);
}
process.exit(0);
