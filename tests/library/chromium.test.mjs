// The pure interfaces in a real headless Chromium: the page loads the jco-transpiled component
// over http and runs every case; each must give exactly what cases.mjs expects (and so what the
// Node.js and wast hosts give).
import assert from "node:assert/strict";
import path from "node:path";
import { after, before, test } from "node:test";
import { fileURLToPath } from "node:url";
import { CASES, canonical, expected } from "./cases.mjs";
import { launchChromium } from "./chromium.mjs";
import { serveStatic } from "./static-server.mjs";

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../..");
let server;
let browser;
let results;
let userAgent;

before(async () => {
  server = await serveStatic(root);
  browser = await launchChromium();
  const page = await browser.newPage();
  const errors = [];
  page.on("pageerror", (e) => errors.push(String(e)));
  await page.goto(`${server.url}/tests/library/page.html`);
  await page.waitForFunction(() => window.nanoletResults !== undefined, null, { timeout: 30_000 })
    .catch((e) => { throw new Error(`page did not finish: ${errors.join("; ") || e}`); });
  results = new Map((await page.evaluate(() => window.nanoletResults)).map((r) => [r.id, r.got]));
  userAgent = await page.evaluate(() => navigator.userAgent);
});

after(async () => {
  await browser?.close();
  await server?.close();
});

test("the page runs in Chromium, not an emulation", () => {
  assert.match(userAgent, /HeadlessChrome\/\d+/);
  assert.equal(results.size, CASES.length);
});

for (const c of CASES) {
  test(`chromium: ${c.id}`, () => {
    assert.equal(results.get(c.id), canonical(expected(c)));
  });
}
