// global.mjs - the dashboard page's global view in a real browser (Debian's
// chromium, driven by playwright-core from web/node_modules), against a
// running `taskscope dashboard` that has heard of two processes that never
// ran together: A, finished, then B, streaming.  Run by
// tests/test_dashboard_global.sh, which starts them and passes, in the
// environment:
//   TSE2E_URL       the page's address (http://ADDR:PORT/)
//   TSE2E_WEB       the web/ folder (its node_modules holds playwright-core)
//   TSE2E_A, TSE2E_B            the two processes' ids (A finished, B running)
//   TSE2E_RATE_A, TSE2E_RATE_B  their tasks.ended_per_s (constant)
//   CHROMIUM        the browser (/usr/bin/chromium)
//   TSCOPE_SCREENSHOT  if set, a PNG of the page's top at the end
// Checks: the page opens on B; the global throughput chart draws both, A's
// line ending before B's begins, and its total is A's rate while A lived and
// B's while B lives, never their sum, broken between them; A is listed as
// finished, B as connected; the legends show numbers (the latest values with
// the cursor off the chart, the value at the cursor on it); no console error.
// Every check asserts a value and prints "ok - ..."; the first failure
// prints "FAIL: ..." with what was seen and exits 1.
import { createRequire } from 'node:module';
import path from 'node:path';

const env = (name) => {
  const v = process.env[name];
  if (v === undefined || v === '') { console.error(`FAIL: ${name} is not set`); process.exit(1); }
  return v;
};
const url = env('TSE2E_URL');
const webDir = env('TSE2E_WEB');
const aId = Number(env('TSE2E_A')), bId = Number(env('TSE2E_B'));
const rateA = Number(env('TSE2E_RATE_A')), rateB = Number(env('TSE2E_RATE_B'));
const chromiumPath = env('CHROMIUM');

const { chromium } = createRequire(path.join(webDir, 'package.json'))('playwright-core');

let browser;
async function fail(msg) {
  console.error('FAIL: ' + msg);
  if (browser) await browser.close().catch(() => {});
  process.exit(1);
}
const ok = (msg) => console.log('ok - ' + msg);
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
async function until(fn, ms, every = 100) {
  const end = Date.now() + ms;
  let v;
  for (;;) {
    v = await fn();
    if (v || Date.now() > end) return v;
    await sleep(every);
  }
}

browser = await chromium.launch({ executablePath: chromiumPath, args: ['--no-sandbox'] });
const page = await (await browser.newContext({ viewport: { width: 1440, height: 1100 } })).newPage();
const consoleErrors = [];
page.on('console', (m) => { if (m.type() === 'error') consoleErrors.push(m.text()); });
page.on('pageerror', (e) => consoleErrors.push('uncaught: ' + e.message));

// 1. the page opens on the running process, not the first one it lists
const resp = await page.goto(url, { waitUntil: 'load' });
if (!resp || resp.status() !== 200) await fail(`GET ${url}: HTTP ${resp && resp.status()}`);
if (!(await until(() => page.evaluate(() => typeof window.tsDashboard === 'object'), 5000))) await fail('no window.tsDashboard');
const first = await until(() => page.evaluate(() => window.tsDashboard.selected()), 20000);
if (first !== bId) await fail(`the page opened on process ${first}, not on the running one (${bId}); processes: ${JSON.stringify(await page.evaluate(() => window.tsDashboard.processes()))}`);
ok(`the page opens on the running process ${bId}, not on the finished ${aId}`);

// 2. the global throughput: both drawn, the total never their sum
const g = await until(async () => {
  const d = await page.evaluate(() => window.tsDashboard.global('throughput'));
  if (!d || d.processes.length !== 2) return null;
  const b = d.processes.find((p) => p.id === bId);
  return b && b.values.filter((v) => v != null).length >= 5 ? d : null;
}, 20000);
if (!g) await fail('the global throughput chart does not draw both processes: ' + JSON.stringify(await page.evaluate(() => window.tsDashboard.global('throughput'))));
const A = g.processes.find((p) => p.id === aId), B = g.processes.find((p) => p.id === bId);
if (!A || !B) await fail('the global chart lacks A or B: ' + JSON.stringify(g.processes.map((p) => p.id)));
const idx = (vals) => vals.map((v, i) => (v == null ? -1 : i)).filter((i) => i >= 0);
const ia = idx(A.values), ib = idx(B.values);
if (!ia.length || A.values.some((v) => v != null && v !== rateA)) await fail(`A's line: ${JSON.stringify(A.values)}`);
if (B.values.some((v) => v != null && v !== rateB)) await fail(`B's line: ${JSON.stringify(B.values)}`);
const aEnd = ia[ia.length - 1], bStart = ib[0];
if (!(aEnd < bStart)) await fail(`A's line does not end before B's begins: A ends at x index ${aEnd}, B begins at ${bStart}`);
ok(`A's line (${ia.length} points of ${rateA}) ends at ${new Date(g.x[aEnd] * 1000).toISOString()}, B's (${rateB}) begins at ${new Date(g.x[bStart] * 1000).toISOString()}`);
const totals = g.total.filter((v) => v != null);
const max = Math.max(...totals);
if (max !== Math.max(rateA, rateB)) await fail(`the total's largest value is ${max}, expected ${Math.max(rateA, rateB)} (the sum would be ${rateA + rateB}): ${JSON.stringify(g.total)}`);
for (let j = 0; j < g.total.length; j++) {
  const want = j <= aEnd && j >= ia[0] ? rateA : j >= bStart ? rateB : null;
  if (g.total[j] !== want) await fail(`the total at x index ${j} is ${g.total[j]}, expected ${want} (A lives over ${ia[0]}..${aEnd}, B from ${bStart}): ${JSON.stringify(g.total)}`);
}
ok(`the total is ${rateA} while A lived, ${rateB} while B lives, nothing between (${g.total.slice(aEnd + 1, bStart).length} x values), never ${rateA + rateB}`);
if (!/finished/.test(A.label) || /finished/.test(B.label)) await fail(`the lines' labels: A '${A.label}', B '${B.label}'`);
ok(`the lines are labelled '${A.label}' and '${B.label}'`);

// 3. the process list: A finished, B connected
const rowA = page.locator(`#proc-table tr[data-id="${aId}"]`), rowB = page.locator(`#proc-table tr[data-id="${bId}"]`);
const listed = await until(async () => (await rowA.count()) && (await rowB.count()), 5000);
if (!listed) await fail('the process list lacks A or B');
const [stA, stB, textA, textB] = [await rowA.getAttribute('data-state'), await rowB.getAttribute('data-state'), await rowA.innerText(), await rowB.innerText()];
if (stA !== 'finished' || !/finished/.test(textA) || stB !== 'connected' || !/connected/.test(textB)) await fail(`the process list: A '${textA}' (${stA}), B '${textB}' (${stB})`);
ok(`the process list shows A as finished ('${textA.replace(/\s+/g, ' ')}') and B as connected`);

// 4. the legends show numbers: the latest values with the cursor off the chart
const legend = (name) => page.evaluate((n) => window.tsDashboard.legend(n), name);
const row = (l, re) => (l || []).find(([label]) => re.test(label)) || [null, null];
const isNum = (text) => text != null && /^-?[0-9][0-9.]*[kMG]?$/.test(text);
const want = (l, re, v) => row(l, re)[1] === v;
const off = await until(async () => {
  const l = await legend('global.throughput');
  return want(l, new RegExp('pid .*finished'), String(rateA)) && want(l, /^rank 1 pid \d+$/, String(rateB)) && want(l, /^total/, String(rateB)) ? l : null;
}, 5000);
if (!off) await fail(`the throughput legend with the cursor off the chart: ${JSON.stringify(await legend('global.throughput'))}`);
const speed = await legend('global.speed');
if (!isNum(row(speed, /^rank 1/)[1]) || !isNum(row(speed, /^mean/)[1])) await fail(`the speed legend: ${JSON.stringify(speed)}`);
ok(`the legends show the latest values: throughput ${JSON.stringify(off)}, speed ${JSON.stringify(speed)}`);

// on the chart at its right end: B's value and the total; A, finished, none
const over = page.locator('[data-chart="global.throughput"] .u-over');
const box = await over.boundingBox();
if (!box) await fail('the throughput chart has no plot area');
await page.mouse.move(box.x + box.width - 2, box.y + box.height / 2);
const at = await until(async () => {
  const l = await legend('global.throughput');
  return want(l, /^rank 1 pid \d+$/, String(rateB)) && want(l, /^total/, String(rateB)) && want(l, /finished/, '–') ? l : null;
}, 5000);
if (!at) await fail(`the throughput legend with the cursor at the chart's right end: ${JSON.stringify(await legend('global.throughput'))}`);
// and off it again: the latest values, not "–"
await page.mouse.move(5, 5);
const back = await until(async () => {
  const l = await legend('global.throughput');
  return want(l, /^rank 1 pid \d+$/, String(rateB)) && want(l, /^total/, String(rateB)) ? l : null;
}, 5000);
if (!back) await fail(`the throughput legend after the cursor left the chart: ${JSON.stringify(await legend('global.throughput'))}`);
ok(`with the cursor on the chart's right end the legend shows ${JSON.stringify(at)}; off it again, ${JSON.stringify(back)}`);

if (process.env.TSCOPE_SCREENSHOT) {
  await page.evaluate(() => window.scrollTo(0, 0));
  await page.screenshot({ path: process.env.TSCOPE_SCREENSHOT, fullPage: false });
  ok('screenshot in ' + process.env.TSCOPE_SCREENSHOT);
}
await sleep(300);
if (consoleErrors.length) await fail('console errors: ' + consoleErrors.join(' | '));
ok('no console errors');
await browser.close();
