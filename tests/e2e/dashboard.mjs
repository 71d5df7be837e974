// dashboard.mjs - the dashboard's page in a real browser (Debian's chromium,
// driven by playwright-core from web/node_modules), against a running
// `taskscope dashboard` and one process streaming to it.  Run by
// tests/test_dashboard_e2e.sh, which starts both and passes, in the
// environment:
//   TSE2E_URL        the page's address (http://ADDR:PORT/)
//   TSE2E_TOKEN      the dashboard's token
//   TSE2E_WEB        the web/ folder (its node_modules holds playwright-core)
//   TSE2E_PROC_LOG   the process's output (stdout and stderr)
//   TSE2E_PARAM      the int parameter the slider test moves (rt.thread_cap)
//   TSE2E_APPLIED    1: the process acknowledges a command and its next
//                    snapshot reports the new value (a real program)
//   TSE2E_LOG        1: a command the process received shows in its output
//                    (tests/live/fakeproc prints each one)
//   TSCOPE_SCREENSHOT  if set, a PNG of the page while the process streams,
//                    and one at the breakpoint (NAME-debugger.png)
//   CHROMIUM         the browser (/usr/bin/chromium)
// Checks, in order: the page loads; the charts gain points; the slider's
// control reaches the process; a wrong token gets 403 and changes nothing;
// (TSE2E_APPLIED) pause and resume, a breakpoint on a type, a step; no
// console error or foreign request.
// Every check asserts a value and prints "ok - ..."; the first failure
// prints "FAIL: ..." with what was seen and exits 1.
import { createRequire } from 'node:module';
import fs from 'node:fs';
import path from 'node:path';

const env = (name, dflt) => {
  const v = process.env[name];
  if (v === undefined || v === '') {
    if (dflt === undefined) { console.error(`FAIL: ${name} is not set`); process.exit(1); }
    return dflt;
  }
  return v;
};
const url = env('TSE2E_URL');
const token = env('TSE2E_TOKEN');
const webDir = env('TSE2E_WEB');
const procLog = env('TSE2E_PROC_LOG');
const param = env('TSE2E_PARAM', 'rt.thread_cap');
const applied = env('TSE2E_APPLIED', '1') === '1';
const logged = env('TSE2E_LOG', '0') === '1';
if (!applied && !logged) { console.error('FAIL: neither TSE2E_APPLIED nor TSE2E_LOG: nothing would show that a control arrived'); process.exit(1); }
const screenshot = process.env.TSCOPE_SCREENSHOT || '';
const chromiumPath = env('CHROMIUM', '/usr/bin/chromium');

const { chromium } = createRequire(path.join(webDir, 'package.json'))('playwright-core');
const origin = new URL(url).origin;

let browser;
async function fail(msg) {
  console.error('FAIL: ' + msg);
  if (browser) await browser.close().catch(() => {});
  process.exit(1);
}
const ok = (msg) => console.log('ok - ' + msg);
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
// Polls fn (async) until it returns a truthy value or ms pass; the last value.
async function until(fn, ms, every = 100) {
  const end = Date.now() + ms;
  let v;
  for (;;) {
    v = await fn();
    if (v || Date.now() > end) return v;
    await sleep(every);
  }
}
// The lines of the process's stdout that carry a command setting param to value.
const escapeRe = (s) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
function commandLines(value) {
  const re = new RegExp(escapeRe(param) + '\\D{1,20}?' + escapeRe(String(value)) + '(?![0-9.])');
  let text = '';
  try { text = fs.readFileSync(procLog, 'utf8'); } catch (e) { /* not written yet */ }
  return text.split('\n').filter((l) => re.test(l));
}

browser = await chromium.launch({ executablePath: chromiumPath, args: ['--no-sandbox'] });
const context = await browser.newContext({ viewport: { width: 1440, height: 1100 } });
const page = await context.newPage();

// Everything the console says as an error, every uncaught exception, every
// request that fails or leaves the dashboard.
const consoleErrors = [];
const outside = [];
const failed = [];
let allow403 = false; // while the wrong-token check runs, Chrome logs the refused POST
page.on('console', (m) => {
  if (m.type() !== 'error') return;
  if (allow403 && /status of 403/.test(m.text())) return;
  consoleErrors.push(m.text());
});
page.on('pageerror', (e) => consoleErrors.push('uncaught: ' + e.message));
page.on('request', (r) => {
  const u = r.url();
  if (!u.startsWith('data:') && new URL(u).origin !== origin) outside.push(u);
});
page.on('requestfailed', (r) => {
  // the event stream is cut when the page closes; nothing else may fail
  if (!r.url().endsWith('/api/events')) failed.push(r.url() + ': ' + (r.failure() || {}).errorText);
});

// 1. the page loads, with uPlot, and finds the process
const resp = await page.goto(url, { waitUntil: 'load' });
if (!resp || resp.status() !== 200) await fail(`GET ${url}: HTTP ${resp && resp.status()}`);
const hasApi = await until(() => page.evaluate(() => typeof window.tsDashboard === 'object' && typeof window.uPlot === 'function'), 5000);
if (!hasApi) await fail('the page has no window.tsDashboard or no uPlot (console: ' + consoleErrors.join(' | ') + ')');
ok('the page loads (HTTP 200) with uPlot and window.tsDashboard');

const procs = await until(() => page.evaluate(() => {
  const l = window.tsDashboard.processes().filter((p) => p.connected !== false);
  return l.length ? l : null;
}), 20000);
if (!procs) await fail('no connected process on the page after 20 s: ' + JSON.stringify(await page.evaluate(() => window.tsDashboard.processes())));
const proc = procs[0];
await page.evaluate((id) => window.tsDashboard.select(id), proc.id);
const row = page.locator(`#proc-table tr[data-id="${proc.id}"]`);
await row.click();
const rowText = await row.innerText();
if (!rowText.includes(String(proc.pid)) || !/connected/.test(rowText)) await fail(`process row: '${rowText}'`);
ok(`the process list shows pid ${proc.pid} (rank ${proc.rank}, ${proc.program}) as connected`);

// 2. the charts gain points while the process streams
const charts = ['global.throughput', 'global.speed', 'proc.cpu', 'proc.memory'];
const count = () => page.evaluate((names) => names.map((n) => window.tsDashboard.points(n)), charts);
const before = await until(async () => { const c = await count(); return c.every((n) => n >= 1) ? c : null; }, 10000);
if (!before) await fail('charts without points: ' + charts.map((n, i) => n + '=' + 0).join(' ') + ' ' + JSON.stringify(await count()));
const after = await until(async () => { const c = await count(); return c.every((n, i) => n >= before[i] + 5) ? c : null; }, 15000);
if (!after) await fail(`the charts did not gain 5 points in 15 s: before ${JSON.stringify(before)}, now ${JSON.stringify(await count())}`);
ok('the charts gain points while the process streams: ' + charts.map((n, i) => `${n} ${before[i]} -> ${after[i]}`).join(', '));

// 2b. the task graph: the program's types as boxes, split's children as edges
const graph = await until(async () => {
  const g = await page.evaluate(() => window.tsDashboard.graph());
  return g.types.includes('split') && g.types.includes('leaf') && g.edges.includes('split->leaf') && g.edges.includes('split->split') ? g : null;
}, 10000);
if (!graph) await fail('the task graph does not show split -> split and split -> leaf: ' + JSON.stringify(await page.evaluate(() => window.tsDashboard.graph())));
ok(`the task graph shows ${graph.types.length} types and the edges ${graph.edges.join(', ')}`);

// 2c. each type in the colour the pictures give it (the snapshot's "color",
// src/export/palette.c): the waiting type ("round wait", tests/e2e/live_worker)
// grey, split and leaf in two colours that are not grey
if (applied) {
  const grey = (c) => /^#([0-9a-f]{2})\1\1$/i.test(String(c));
  const strokes = await until(async () => {
    const st = new Map(await page.evaluate(() => window.tsDashboard.typeStrokes()));
    return st.has('split') && st.has('leaf') && st.has('round wait') ? st : null;
  }, 15000);
  if (!strokes) await fail('the running-tasks chart lacks split, leaf or round wait: ' + JSON.stringify(await page.evaluate(() => window.tsDashboard.typeStrokes())));
  const snapTypes = (await page.evaluate(() => (window.tsDashboard.lastSnapshot() || {}).types)) || [];
  const wanted = new Map(snapTypes.map((t) => [t.name, t.color]));
  const s = strokes.get('split'), l = strokes.get('leaf'), w = strokes.get('round wait');
  if (!grey(w) || grey(s) || grey(l) || s === l)
    await fail(`type colours: split ${s}, leaf ${l}, round wait ${w} (want a grey wait and two distinct colours)`);
  if (!wanted.get('round wait') || !grey(wanted.get('round wait')))
    await fail(`the snapshot's colour of round wait is ${wanted.get('round wait')}, not a grey`);
  ok(`the types in the pictures' colours: split ${s}, leaf ${l}, round wait ${w} (grey)`);
}

if (screenshot) {
  await sleep(8000); // more points: about 12 s of the process
  await page.evaluate(() => window.scrollTo(0, 0)); // the fixed header at the top
  await page.screenshot({ path: screenshot, fullPage: true });
  ok('screenshot in ' + screenshot);
}

// 3. the slider sends a control; the process gets it (and reports it)
const control = page.locator(`.control[data-param="${param}"]`);
if (!(await until(() => control.count(), 5000))) await fail(`no control for ${param} (params: ${JSON.stringify(await page.evaluate(() => (window.tsDashboard.lastSnapshot() || {}).params))})`);
const slider = control.locator('input[type="range"]');
const [min, max] = [Number(await slider.getAttribute('min')), Number(await slider.getAttribute('max'))];
const reported = await page.evaluate((n) => window.tsDashboard.param(n), param);
if (!(max > min) || typeof reported !== 'number') await fail(`${param}: range ${min}..${max}, reported ${reported}`);
const target = reported === min ? max : min;
const other = target === min ? max : min;
const status = control.locator('.status');

await page.fill('#token', token);
const stored = await page.evaluate(() => sessionStorage.getItem('taskscope.token'));
if (stored !== token) await fail(`the token is not kept in sessionStorage: '${stored}'`);
const linesBefore = commandLines(target).length;
await slider.focus();
await page.keyboard.press(target === min ? 'Home' : 'End');
const st = await until(async () => (await status.getAttribute('data-status')) || null, 5000);
if (st !== '200') await fail(`the control answered HTTP ${st}: '${await status.innerText()}'`);
const sentText = await status.innerText();
if (!/sent to 1 process/.test(sentText)) await fail(`the control's status: '${sentText}'`);
ok(`moving the ${param} slider from ${reported} to ${target} sends a control: '${sentText}'`);
if (logged) {
  const lines = await until(() => { const l = commandLines(target); return l.length > linesBefore ? l : null; }, 10000);
  if (!lines) await fail(`the process's output shows no command setting ${param} to ${target}:\n${fs.existsSync(procLog) ? fs.readFileSync(procLog, 'utf8').slice(-2000) : '(no output)'}`);
  ok(`the process received it: '${lines[lines.length - 1].trim()}'`);
}
if (applied) {
  const ack = control.locator('.ack');
  const ackText = await until(async () => { const t = await ack.innerText(); return t ? t : null; }, 10000);
  if (!ackText || (await ack.getAttribute('data-ok')) !== 'true') await fail(`no positive acknowledgement next to the control: '${ackText}'`);
  ok(`the program's acknowledgement is shown next to the control: '${ackText}'`);
  const now = await until(async () => (await page.evaluate((n) => window.tsDashboard.param(n), param)) === target, 10000);
  if (!now) await fail(`the next snapshots report ${param} = ${await page.evaluate((n) => window.tsDashboard.param(n), param)}, not ${target}`);
  const reportedEl = control.locator('.reported');
  const shown = await until(async () => { const t = await reportedEl.innerText(); return t === `reported: ${target}` ? t : null; }, 3000);
  if (!shown) await fail(`the control shows '${await reportedEl.innerText()}'`);
  ok(`the next snapshot reports ${param} = ${target}, shown as '${shown}'`);
}

// 4. a wrong token: 403 on the page, nothing reaches the process
if (!applied) await sleep(1500); // whatever the accepted command does has happened
allow403 = true;
await page.fill('#token', 'not-the-token');
const otherBefore = commandLines(other).length;
const paramBefore = await page.evaluate((n) => window.tsDashboard.param(n), param);
await status.evaluate((e) => { delete e.dataset.status; });
await slider.focus();
await page.keyboard.press(other === min ? 'Home' : 'End');
const st403 = await until(async () => (await status.getAttribute('data-status')) || null, 5000);
const text403 = await status.innerText();
if (st403 !== '403' || !/wrong token/.test(text403)) await fail(`a wrong token: HTTP ${st403}, '${text403}'`);
await sleep(2000);
if (applied && (await control.locator('.ack').innerText()) !== '') await fail(`a wrong token's command was acknowledged: '${await control.locator('.ack').innerText()}'`);
if (logged && commandLines(other).length !== otherBefore) await fail(`a wrong token's command reached the process: ${commandLines(other).slice(-1)}`);
const paramAfter = await page.evaluate((n) => window.tsDashboard.param(n), param);
if (paramAfter !== paramBefore) await fail(`a wrong token changed ${param}: ${paramBefore} -> ${paramAfter}`);
ok(`a wrong token shows '${text403}', ${logged ? 'the process got nothing and ' : ''}${param} stays ${paramAfter}`);
allow403 = false;
await page.fill('#token', token);

// 5. the debugger (a real program): pause shows the tasks held, resume runs again
if (applied) {
  const state = page.locator('#debug-state');
  await page.click('#dbg-pause');
  const paused = await until(async () => { const t = await state.innerText(); return /^paused \(\d+ tasks? held\)/.test(t) ? t : null; }, 10000);
  if (!paused) await fail(`after pause the debugger shows '${await state.innerText()}'`);
  const pausedRow = await until(async () => { const t = await row.innerText(); return /connected, paused/.test(t) ? t : null; }, 3000);
  if (!pausedRow) await fail(`the process row of a paused process: '${await row.innerText()}'`);
  await page.click('#dbg-resume');
  const running = await until(async () => { const t = await state.innerText(); return /^running/.test(t) ? t : null; }, 10000);
  if (!running) await fail(`after resume the debugger shows '${await state.innerText()}'`);
  const resumedAck = await page.locator('#debug-ack').innerText();
  ok(`pause shows '${paused}' (not hung), resume shows '${running}' (acknowledged: '${resumedAck}')`);

  // a breakpoint on the type "leaf": the program stops before its next leaf
  // task and no leaf task begins while it stands; cleared and resumed, the
  // program runs on (more leaf tasks end)
  const leafCalls = () => page.evaluate(() => {
    const s = window.tsDashboard.lastSnapshot();
    const t = s && Array.isArray(s.types) ? s.types.find((x) => x.name === 'leaf') : null;
    return t ? t.calls : -1;
  });
  await page.selectOption('#dbg-break', 'leaf');
  const hit = await until(async () => { const t = await state.innerText(); return /^paused .*stopped at a leaf task/.test(t) ? t : null; }, 10000);
  if (!hit) await fail(`after break on leaf the debugger shows '${await state.innerText()}'`);
  await sleep(500); // the leaf tasks running at the hit end
  const c1 = await leafCalls();
  await sleep(1500);
  const c2 = await leafCalls();
  if (c1 < 0 || c2 !== c1) await fail(`leaf tasks ended while stopped at the breakpoint: ${c1} -> ${c2}`);
  if (screenshot) {
    const shot = screenshot.replace(/(\.png)?$/, '-debugger.png');
    await page.evaluate(() => window.scrollTo(0, 0)); // the fixed header at the top
    await page.screenshot({ path: shot, fullPage: true });
    ok('screenshot at the breakpoint in ' + shot);
  }
  // step: one task may begin (a leaf, or a split whose first child is held
  // again: two threads), then it is paused again
  await page.click('#dbg-step');
  const stepAck = await until(async () => { const t = await page.locator('#debug-ack').innerText(); return /step: one task may begin/.test(t) ? t : null; }, 10000);
  if (!stepAck) await fail(`step: the acknowledgement shows '${await page.locator('#debug-ack').innerText()}'`);
  await sleep(1500);
  const c4 = await leafCalls();
  const afterStep = await state.innerText();
  // with one thread running tasks (the slider set the cap to 1 above) the
  // held task is the leaf at the breakpoint: exactly one more; with more,
  // the stepped task may be a split whose first child is held again
  const cap = await page.evaluate((n) => window.tsDashboard.param(n), 'rt.thread_cap');
  const ok1 = cap === 1 ? c4 === c2 + 1 : c4 >= c2 && c4 <= c2 + 1;
  if (!/^paused/.test(afterStep) || !ok1) await fail(`after a step: '${afterStep}', leaf tasks ${c2} -> ${c4} (thread cap ${cap}: expected ${cap === 1 ? 'exactly' : 'at most'} one more)`);
  ok(`step is acknowledged ('${stepAck}'), the process stays paused ('${afterStep}'), leaf tasks ${c2} -> ${c4}`);
  await page.selectOption('#dbg-break', '');
  await until(async () => !/break on/.test(await state.innerText()), 5000);
  await page.click('#dbg-resume');
  const c3 = await until(async () => { const c = await leafCalls(); return c > c4 + 100 ? c : null; }, 10000);
  if (!c3) await fail(`after clearing the breakpoint and resuming, leaf tasks did not go on (${c4} -> ${await leafCalls()})`);
  ok(`break on leaf shows '${hit}'; leaf tasks stay at ${c1} while it stands; cleared and resumed: ${c3}`);
}

// 6. no console errors, no request outside the dashboard, none failed
await sleep(500);
if (consoleErrors.length) await fail('console errors: ' + consoleErrors.join(' | '));
if (outside.length) await fail('requests outside the dashboard: ' + outside.join(' '));
if (failed.length) await fail('failed requests: ' + failed.join(' | '));
ok('no console errors, no request outside ' + origin + ', none failed');

await browser.close();
