// What the report page's bundle gets for Node.js modules: the simulator's code reaches them only
// on paths the page never takes (reading the component from disk, writing files), except the MD5
// of static pod uids, which spark-md5 computes as Node's crypto does (UTF-8 input, hex output).
import SparkMD5 from "spark-md5";

const unavailable = (what: string) => () => {
  throw new Error(`${what} is not available in the browser`);
};

export const readdir = unavailable("fs.readdir");
export const readFile = unavailable("fs.readFile");
export const readFileSync = unavailable("fs.readFileSync");
export const fileURLToPath = () => "";
export const join = (...parts: string[]) => parts.join("/");
export const dirname = (p: string) => p.replace(/\/[^/]*$/, "");
export const basename = (p: string) => p.replace(/^.*\//, "");

export function createHash(algorithm: string) {
  if (algorithm !== "md5") throw new Error(`createHash(${algorithm}) is not available in the browser`);
  let text = "";
  const hash = {
    update(chunk: string) {
      text += chunk;
      return hash;
    },
    digest(encoding: string) {
      if (encoding !== "hex") throw new Error(`digest(${encoding}) is not available in the browser`);
      return SparkMD5.hash(text);
    },
  };
  return hash;
}

export default { readdir, readFile, readFileSync, join, dirname, basename, fileURLToPath, createHash };
