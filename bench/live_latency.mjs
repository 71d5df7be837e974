// live_latency.mjs - the browser's side of `scripts/bench live`: opens the
// dashboard's page in headless Chromium (playwright-core from web/node_modules)
// for SECONDS and prints, as JSON, the latencies the page measured from each
// snapshot's "wall" (taken by the sender) to the redraw that drew it
// (window.tsDashboard.latencies(), web/app.js), after the first WARMUP seconds.
//   usage: node live_latency.mjs URL SECONDS WARMUP
import { createRequire } from 'node:module';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const here = path.dirname(fileURLToPath(import.meta.url));
const require = createRequire(path.join(here, '..', 'web', 'package.json'));
const { chromium } = require('playwright-core');

const [url, seconds, warmup] = [process.argv[2], Number(process.argv[3]), Number(process.argv[4])];
const browser = await chromium.launch({ executablePath: '/usr/bin/chromium', args: ['--no-sandbox'] });
try {
  const page = await browser.newPage({ viewport: { width: 1400, height: 1000 } });
  await page.goto(url);
  await page.waitForFunction(() => window.tsDashboard !== undefined);
  await page.waitForTimeout(warmup * 1000);
  const skip = await page.evaluate(() => [window.tsDashboard.latencies().length, window.tsDashboard.arrivals().length]);
  await page.waitForTimeout((seconds - warmup) * 1000);
  const lat = (await page.evaluate(() => window.tsDashboard.latencies())).slice(skip[0]);
  const arr = (await page.evaluate(() => window.tsDashboard.arrivals())).slice(skip[1]);
  const q = (v, f) => (v.length ? v[Math.min(v.length - 1, Math.floor(f * v.length))] : null);
  lat.sort((a, b) => a - b);
  arr.sort((a, b) => a - b);
  console.log(JSON.stringify({ n: lat.length, median: q(lat, 0.5), p90: q(lat, 0.9), max: q(lat, 1),
    arrival_median: q(arr, 0.5), arrival_p90: q(arr, 0.9) }));
} finally {
  await browser.close();
}
