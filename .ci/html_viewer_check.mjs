// The HTML report's trajectory viewer in a real headless Chromium, used as a
// researcher would: filter the runs table by strategy, click into a run,
// expand a step, and find the tool call and its result; on a sweep, the
// strategies of a scenario overlaid. Prints how long the page took to load
// and to draw its runs table; fails past --max-ms (default 3000).
// usage: node .ci/html_viewer_check.mjs REPORT.html [--max-ms N] [--sweep]
//        (NODE_PATH must reach puppeteer-core)
import { statSync } from 'node:fs';
import { resolve } from 'node:path';
import { withPage } from './headless.mjs';
const args = process.argv.slice(2);
const file = resolve(args[0]);
const maxMs = Number(args.includes('--max-ms') ? args[args.indexOf('--max-ms') + 1] : 3000);
const sweep = args.includes('--sweep');
await withPage(async (page, problems) => {
  const started = Date.now();
  await page.goto(`file://${file}`, { waitUntil: 'load' });
  // Layout and paint of what was loaded, the runs table included.
  const rows = await page.evaluate(() => new Promise((done) => requestAnimationFrame(() => requestAnimationFrame(() => {
    done(document.querySelectorAll('#runs tbody tr').length);
  }))));
  const loadMs = Date.now() - started;
  const mb = (statSync(file).size / 1e6).toFixed(1);
  console.log(`viewer check: ${rows} runs, ${mb} MB, loaded and drawn in ${loadMs} ms (limit ${maxMs} ms)`);
  if (loadMs > maxMs) problems.push(`the page took ${loadMs} ms to load, over ${maxMs} ms`);

  // Filter the table by a strategy: only that strategy's rows stay visible.
  const filtered = await page.evaluate(() => {
    const select = document.querySelector('#filters select[name="strategy"]');
    const value = select && select.options.length > 1 ? select.options[select.options.length - 1].value : null;
    if (!value) { return { value: null }; }
    select.value = value;
    select.dispatchEvent(new Event('change'));
    const rows = [...document.querySelectorAll('#runs tbody tr')];
    const visible = rows.filter((r) => r.style.display !== 'none');
    const result = { value, visible: visible.length, matching: rows.filter((r) => r.dataset.strategy === value).length,
                     wrong: visible.filter((r) => r.dataset.strategy !== value).length };
    select.value = '';
    select.dispatchEvent(new Event('change'));
    return result;
  });
  if (!filtered.value) problems.push('no strategy filter');
  else if (filtered.visible !== filtered.matching || filtered.wrong) problems.push(`filter ${JSON.stringify(filtered)}`);

  // Click into runs (one per scenario) until one has a step with a tool
  // call; expand that step.
  const firsts = await page.$$eval('#runs a.view', (links) => links.map((link, i) => [link.textContent, i])
    .filter(([name], i, all) => i === 0 || all[i - 1][0] !== name).map(([, i]) => i));
  let found = null;
  for (const i of firsts.slice(0, 40)) {
    if (found) { break; }
    await page.evaluate((index) => document.querySelectorAll('#runs a.view')[index].click(), i);
    found = await page.evaluate(() => {
      const steps = [...document.querySelectorAll('#viewer details.step')];
      const step = steps.find((d) => d.querySelector('summary').textContent.includes('·'));
      if (!step) { return null; }
      const before = step.querySelectorAll('.tool').length;
      step.querySelector('summary').click();
      return new Promise((done) => setTimeout(() => {
        const tool = step.querySelector('.tool');
        done({
          steps: steps.length, before, open: step.open,
          call: tool && tool.querySelector('.toolname').textContent,
          arguments: tool && tool.querySelector('pre.arguments').textContent,
          result: tool && tool.querySelector('pre.result').textContent,
          title: document.querySelector('#viewer h2').textContent,
        });
      }, 50));
    });
  }
  if (!found) problems.push('no run with a tool call opened in the viewer');
  else {
    if (found.before !== 0) problems.push('a step was drawn before it was expanded');
    if (!found.open || !found.call || !found.call.startsWith('tool call ')) problems.push(`no tool call in the expanded step: ${JSON.stringify(found)}`);
    if (!found.result || found.result === '(no result)') problems.push(`no tool result in the expanded step: ${JSON.stringify(found)}`);
    console.log(`viewer check: ${found.title}, ${found.steps} steps; expanded one shows ${found.call} → ${JSON.stringify(found.result.slice(0, 60))}`);
  }
  if (sweep) {
    const overlay = await page.evaluate(() => {
      const charts = [...document.querySelectorAll('details.overlay svg')];
      return { charts: charts.length, series: charts.length ? charts[0].querySelectorAll('polyline.series').length : 0,
               side: document.querySelectorAll('#by-variant tbody tr').length };
    });
    if (overlay.charts < 3 || overlay.series < 2) problems.push(`no overlaid strategies: ${JSON.stringify(overlay)}`);
    if (overlay.side < 2) problems.push(`no savings and cost by strategy: ${JSON.stringify(overlay)}`);
    console.log(`viewer check: ${overlay.charts} overlay charts, ${overlay.series} strategies on the first, ${overlay.side} strategies side by side`);
  }
});
