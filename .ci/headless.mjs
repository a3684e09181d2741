// The headless Chromium both browser checks use: Debian's chromium driven by
// puppeteer-core, a throwaway profile, and a page that collects every
// console error, exception and network request (a report must load nothing
// from outside the file) into `problems`.
// NODE_PATH must reach puppeteer-core; CHROMIUM overrides /usr/bin/chromium.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { createRequire } from 'node:module';

const require = createRequire(join(resolve(process.env.NODE_PATH || 'node_modules'), 'noop.js'));
const puppeteer = require('puppeteer-core');

// Runs `check(page, problems)` on a fresh page, closes the browser whatever
// happens, then prints the problems and exits 1 if there are any.
export async function withPage(check) {
  const profile = mkdtempSync(join(tmpdir(), 'reloop-chromium-'));
  const browser = await puppeteer.launch({
    executablePath: process.env.CHROMIUM || '/usr/bin/chromium',
    headless: true,
    args: ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking',
           '--disable-component-update', '--disable-sync', `--user-data-dir=${profile}`],
  });
  const problems = [];
  try {
    const page = await browser.newPage();
    page.on('console', (m) => { if (m.type() === 'error') problems.push(`console error: ${m.text()}`); });
    page.on('pageerror', (e) => problems.push(`page error: ${e.message}`));
    page.on('request', (r) => { if (!r.url().startsWith('file:')) problems.push(`network request: ${r.url()}`); });
    await check(page, problems);
  } finally {
    await browser.close();
    rmSync(profile, { recursive: true, force: true });
  }
  if (problems.length) { console.error(problems.join('\n')); process.exit(1); }
}
