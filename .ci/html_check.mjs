// The HTML report in a real headless Chromium: the page loads without
// console errors or exceptions, the runs table is there (and sorts), and
// every SVG renders with a non-empty box and drawn children.
// With SHOT.png, it also saves the page's first screen as a PNG (the
// README's picture, docs/img/report.png, is one of these).
// usage: node .ci/html_check.mjs REPORT.html [SHOT.png]   (NODE_PATH must reach puppeteer-core)
import { resolve } from 'node:path';
import { withPage } from './headless.mjs';
const file = resolve(process.argv[2]);
const shot = process.argv[3];
await withPage(async (page, problems) => {
  await page.goto(`file://${file}`, { waitUntil: 'load' });
  const facts = await page.evaluate(() => {
    const runs = document.querySelector('table#runs');
    document.querySelectorAll('details').forEach((d) => { d.open = true; });
    const svgs = [...document.querySelectorAll('svg')];
    const boxes = svgs.map((s) => { const b = s.getBoundingClientRect(); return { w: b.width, h: b.height, drawn: s.querySelectorAll('polyline,circle,rect,line').length }; });
    const header = runs && runs.querySelector('th:nth-child(11)');
    header && header.click();
    return { runs: runs ? runs.tBodies[0].rows.length : 0, tables: document.querySelectorAll('table').length, boxes, sorted: !!(header && header.classList.contains('asc')) };
  });
  if (facts.runs === 0) problems.push('no runs table rows');
  if (!facts.sorted) problems.push('clicking a header did not sort the runs table');
  if (facts.boxes.length === 0) problems.push('no SVG');
  facts.boxes.forEach((b, i) => { if (!(b.w > 0 && b.h > 0 && b.drawn > 0)) problems.push(`SVG ${i} is empty: ${JSON.stringify(b)}`); });
  console.log(`html check: ${facts.tables} tables, ${facts.runs} runs, ${facts.boxes.length} SVGs rendered`);
  if (shot) {
    // The first screen as loaded, before the checks above opened and sorted.
    await page.setViewport({ width: 1200, height: 800 });
    await page.goto(`file://${file}`, { waitUntil: 'load' });
    await page.screenshot({ path: shot });
    console.log(`screenshot: ${shot}`);
  }
});
