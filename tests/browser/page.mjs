// Drives Debian's chromium (headless) over a shared run's page, as a person would, and prints
// what it saw as JSON lines for tests/share_page.rs to check against the frames.
//
//   node page.mjs view URL      the panes, a p99, updates, help, theme, phone width, no control,
//                               then (after printing {"step":"kill-host"}) the lost connection
//   node page.mjs control URL   a click on + and the poller it adds
//   node page.mjs shot URL FILE a screenshot of the page (for the README)
//   node page.mjs hostile URL   the page (from the real host, with its CSP) fed a frame whose
//                               every string holds markup and script: drawn as text, nothing run
//   node page.mjs ended URL     a real frame, then the host's end event: the status line
import { chromium } from 'playwright-core';

const [mode, url, file] = process.argv.slice(2);
const say = (o) => console.log(JSON.stringify(o));

const browser = await chromium.launch({
  executablePath: process.env.LATLAB_CHROMIUM || '/usr/bin/chromium',
  args: ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
    '--disable-background-networking', '--disable-component-update', '--disable-sync'],
});
const errors = [];
async function open(u, width, height) {
  const page = await browser.newPage({ viewport: { width, height } });
  page.on('pageerror', (e) => errors.push(e.message));
  page.on('requestfailed', (r) => { if (!r.url().startsWith(new URL(url).origin)) errors.push('external request ' + r.url()); });
  page.on('request', (r) => { if (!r.url().startsWith(new URL(url).origin)) errors.push('external request ' + r.url()); });
  await page.goto(u);
  await page.waitForSelector('.pane h2', { timeout: 30000 });
  return page;
}

// What the page shows of the frame it drew, read in one go so both are of the same frame.
const reading = () => {
  const f = window.latlab.shown;
  const title = (l) => l.map((t) => t.text).join('');
  const frameTitles = [];
  for (const tab of f.screen.tabs) {
    for (const [, b] of tab.view.blocks) {
      if (b.type === 'pane') frameTitles.push([title(b.block.title), b.block.narrow ? title(b.block.narrow[1]) : null]);
    }
  }
  const pageTitles = [...document.querySelectorAll('.pane > h2')].map((h) => h.textContent);
  const tables = [...document.querySelectorAll('table')].map((t) => ({
    heads: [...t.querySelectorAll('th')].map((th) => th.textContent),
    rows: [...t.querySelectorAll('tbody tr')].map((tr) => [...tr.querySelectorAll('td')].map((td) => td.textContent)),
  }));
  const c = f.snapshot.kinesis && f.snapshot.kinesis.consumers[0];
  return {
    id: f.id, frameTitles, pageTitles, tables,
    consumer: c ? { name: c.name, p99_us: c.arrival_to_receive.p99_us } : null,
    header: document.getElementById('header').textContent,
  };
};

if (mode === 'view') {
  const page = await open(url, 1400, 1000);
  // A p99 has been measured by the third second.
  await page.waitForFunction(() => window.latlab.shown.snapshot.kinesis.consumers[0].arrival_to_receive.p99_us > 0, null, { timeout: 30000 });
  say({ step: 'read', ...(await page.evaluate(reading)) });
  // The next frame is drawn within two ticks.
  const before = await page.evaluate(() => +document.body.dataset.frame);
  const t0 = Date.now();
  await page.waitForFunction((b) => +document.body.dataset.frame > b, before, { timeout: 10000 });
  say({ step: 'update', waited_ms: Date.now() - t0, before, after: await page.evaluate(() => +document.body.dataset.frame) });
  // ? shows the keys; any key closes them.
  await page.keyboard.press('?');
  const help = await page.evaluate(() => ({ shown: getComputedStyle(document.getElementById('help')).display, text: document.getElementById('help').textContent }));
  await page.keyboard.press('Escape');
  const closed = await page.evaluate(() => getComputedStyle(document.getElementById('help')).display);
  say({ step: 'help', shown: help.shown, text: help.text, closed });
  // Read-only: no buttons, and a key sent anyway is refused.
  const token = new URL(url).searchParams.get('token');
  const refused = await page.evaluate(async (t) => {
    const r = await fetch('/keys?token=' + t, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"key":"+"}' });
    return { status: r.status, text: await r.text() };
  }, token);
  const buttons = await page.evaluate(() => ({ shown: getComputedStyle(document.getElementById('controls')).display, count: document.querySelectorAll('#controls button').length }));
  say({ step: 'readonly', refused, buttons });
  // The themes: the host's own colours when asked, light and dark.
  const colours = {};
  for (const theme of ['light', 'dark']) {
    const p = await open(url + '&theme=' + theme, 900, 700);
    colours[theme] = await p.evaluate(() => getComputedStyle(document.body).backgroundColor);
    await p.close();
  }
  say({ step: 'theme', colours });
  // A phone's width: the tables drop columns as the TUI's do.
  const phone = await open(url, 390, 844);
  await page.waitForTimeout(200);
  say({ step: 'phone', ...(await phone.evaluate(reading)) });
  await phone.close();
  // The host goes away: the page says so, and keeps trying.
  say({ step: 'kill-host' });
  await page.waitForFunction(() => getComputedStyle(document.getElementById('lost')).display === 'block', null, { timeout: 20000 });
  say({ step: 'lost', text: await page.evaluate(() => document.getElementById('lost').textContent) });
} else if (mode === 'control') {
  const page = await open(url, 1400, 1000);
  await page.waitForSelector('#controls button[data-key="+"]', { timeout: 10000 });
  const pollers = () => window.latlab.frame.snapshot.kinesis.consumers.filter((c) => c.kind === 'poller' && c.stopped_at_secs === null).length;
  const before = await page.evaluate(pollers);
  await page.click('#controls button[data-key="+"]');
  await page.waitForFunction((b) => window.latlab.frame.snapshot.kinesis.consumers.filter((c) => c.kind === 'poller' && c.stopped_at_secs === null).length > b, before, { timeout: 15000 });
  say({ step: 'clicked', before, after: await page.evaluate(pollers), status: await page.evaluate(() => document.getElementById('status').textContent) });
  // A fault button: the fault menu's first, injected with its defaults.
  const fault = await page.evaluate(() => document.querySelector('#controls button[data-fault]').dataset.fault);
  await page.click('#controls button[data-fault="' + fault + '"]');
  await page.waitForFunction((f) => window.latlab.frame.snapshot.faults.events.some((e) => e.kind === f), fault, { timeout: 15000 });
  say({ step: 'fault', fault, status: await page.evaluate(() => document.getElementById('status').textContent) });
} else if (mode === 'hostile') {
  // A real frame first, then the same frame with every string a payload, served as the stream.
  const first = await open(url, 1400, 1000);
  const real = await first.evaluate(() => window.latlab.frame);
  const head = await first.evaluate(async () => {
    const r = await fetch(location.href);
    return { csp: r.headers.get('content-security-policy') };
  });
  await first.close();
  const PAYLOADS = [
    '<img src=x onerror="window.__pwned=(window.__pwned||0)+1">',
    '</script><script>window.__pwned=(window.__pwned||0)+1</script>',
    '"\'><svg onload="window.__pwned=(window.__pwned||0)+1">',
    "x)\"><img src=x onerror=window.__pwned=1>",
  ];
  // Structure stays (a frame must still read as one); every other string gets a payload.
  const KEEP = new Set(['type', 'format']);
  let n = 0;
  const poison = (v, key) => {
    if (typeof v === 'string') return KEEP.has(key) ? v : v + PAYLOADS[n++ % PAYLOADS.length];
    if (Array.isArray(v)) return v.map((x) => poison(x, key));
    if (v && typeof v === 'object') return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, poison(x, k)]));
    return v;
  };
  const hostile = poison(real, '');
  const page = await browser.newPage({ viewport: { width: 1400, height: 1000 } });
  const violations = [];
  page.on('console', (m) => { if (/Content Security Policy/.test(m.text())) violations.push(m.text()); });
  page.on('dialog', (d) => { errors.push('a dialog: ' + d.message()); d.dismiss(); });
  await page.route('**/events*', (route) => route.fulfill({
    status: 200,
    headers: { 'content-type': 'text/event-stream', 'cache-control': 'no-store' },
    body: 'event: frame\ndata: ' + JSON.stringify(hostile) + '\n\n',
  }));
  await page.goto(url);
  await page.waitForFunction(() => window.latlab && window.latlab.shown, null, { timeout: 15000 });
  await page.waitForTimeout(1000);
  const seen = await page.evaluate(() => ({
    pwned: window.__pwned || 0,
    // Elements the page never makes itself: any is markup of a frame's, parsed.
    injected: document.querySelectorAll('main img, main svg[onload], main script, header img, #tabs img, #help img, #controls img').length,
    scripts: document.querySelectorAll('script').length,
    titles: [...document.querySelectorAll('.pane > h2')].map((h) => h.textContent),
    panes: document.querySelectorAll('.pane').length,
    header: document.getElementById('header').textContent,
  }));
  say({ step: 'hostile', csp: head.csp, strings: n, violations: violations.length, ...seen });
} else if (mode === 'ended') {
  // A real frame, then the end event the host sends as the run ends (its text is whole).
  const first = await open(url, 1400, 1000);
  const real = await first.evaluate(() => window.latlab.frame);
  await first.close();
  const end = { format: real.format, id: 999999, kind: 'end', at_secs: 1, text: 'the run ended: completed' };
  const page = await browser.newPage({ viewport: { width: 1400, height: 1000 } });
  await page.route('**/events*', (route) => route.fulfill({
    status: 200,
    headers: { 'content-type': 'text/event-stream', 'cache-control': 'no-store' },
    body: 'event: frame\ndata: ' + JSON.stringify(real) + '\n\nevent: end\ndata: ' + JSON.stringify(end) + '\n\n',
  }));
  await page.goto(url);
  await page.waitForFunction(() => window.latlab && window.latlab.shown, null, { timeout: 15000 });
  await page.waitForTimeout(1000);
  say({ step: 'ended', status: await page.evaluate(() => document.getElementById('status').textContent) });
} else if (mode === 'shot') {
  const page = await open(url, 1400, 940);
  await page.waitForTimeout(1500);
  await page.screenshot({ path: file });
  say({ step: 'shot', file });
}
say({ step: 'done', errors });
await browser.close();
