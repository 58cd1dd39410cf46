// Run a MicroPython program in the real MicroPython WebAssembly port under Node.
//
// usage: node mp_run.mjs [--heap BYTES] [--path DIR]... MAIN.py
// Every *.py file below each --path DIR (keeping sub-directories, so packages work) is
// written to the MicroPython file system at /lib-<n>/ and put on sys.path; MAIN.py runs as
// __main__. Exit status: 0 when MAIN.py finished, 1 on an uncaught Python exception
// (its traceback goes to stderr), 2 on a usage error.
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
    if (ent.isDirectory()) { if (ent.name !== "__pycache__" && !ent.name.startsWith(".")) copyTree(s, d); }
    else if (ent.name.endsWith(".py") || ent.name.endsWith(".json")) mp.FS.writeFile(d, fs.readFileSync(s));
  }
}
const libs = [];
paths.forEach((p, n) => { const d = "/lib-" + n; copyTree(p, d); libs.push(d); });
mp.FS.writeFile("/__main_prog__.py", fs.readFileSync(main));
const setup = "import sys\n" + libs.map((d) => `sys.path.append(${JSON.stringify(d)})\n`).join("") +
  "";
try {
  mp.runPython(setup);
  mp.runPython("exec(compile(open('/__main_prog__.py').read(), " + JSON.stringify(path.basename(main)) + ", 'exec'), {'__name__': '__main__'})");
} catch (e) {
  err(String(e && e.message ? e.message : e));
  process.exit(1);
}
process.exit(0);
