// The HTML report's trajectory viewer in a real headless Chromium, used as a
// researcher would: filter the runs table by strategy, click into a run,
// expand a step, and find what the call sent, the reply, the tool call and
// its result; on a sweep, open a step that first sent a masked or compacted
// message and find it shown as such beside its original, and the
// strategies of a scenario overlaid, and the cost–retention frontier (one
// labelled point per strategy, labelled axes). Prints how long the page took to load
// and to draw its runs table; fails past --max-ms (default 3000). With
// --shot FILE, a screenshot of that step (docs/img/viewer.png); with
// --sweep --frontier-shot FILE, of the overall frontier under its heading
// (docs/img/frontier.png).
// usage: node .ci/html_viewer_check.mjs REPORT.html [--max-ms N] [--sweep] [--shot FILE] [--frontier-shot FILE]
//        (NODE_PATH must reach puppeteer-core)
import { statSync } from 'node:fs';
import { resolve } from 'node:path';
import { withPage } from './headless.mjs';
const args = process.argv.slice(2);
const file = resolve(args[0]);
const maxMs = Number(args.includes('--max-ms') ? args[args.indexOf('--max-ms') + 1] : 3000);
const sweep = args.includes('--sweep');
const shot = args.includes('--shot') ? args[args.indexOf('--shot') + 1] : null;
const frontierShot = args.includes('--frontier-shot') ? args[args.indexOf('--frontier-shot') + 1] : null;
await withPage(async (page, problems) => {
  if (shot) { await page.setViewport({ width: 1280, height: 1100 }); }
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
      // A details element draws on its toggle event, which comes a task later.
      const tick = () => new Promise((done) => setTimeout(done, 50));
      return tick().then(() => {
        const sent = step.querySelector('details.sent');
        if (sent) { sent.querySelector('summary').click(); }
        return tick();
      }).then(() => {
        const tool = step.querySelector('.tool');
        const sent = step.querySelector('details.sent');
        return {
          steps: steps.length, before, open: step.open,
          sent: sent && sent.querySelector('summary').textContent,
          messages: sent ? [...sent.querySelectorAll('details.msg')].map((m) => m.querySelector('summary').textContent.slice(0, 40)) : [],
          reply: step.querySelector('pre.reply') && step.querySelector('pre.reply').textContent,
          call: tool && tool.querySelector('.toolname').textContent,
          arguments: tool && tool.querySelector('pre.arguments').textContent,
          result: tool && tool.querySelector('pre.result').textContent,
          title: document.querySelector('#viewer h2').textContent,
        };
      });
    });
  }
  if (!found) problems.push('no run with a tool call opened in the viewer');
  else {
    if (found.before !== 0) problems.push('a step was drawn before it was expanded');
    if (!found.open || !found.call || !found.call.startsWith('tool call ')) problems.push(`no tool call in the expanded step: ${JSON.stringify(found)}`);
    if (!found.result || found.result === '(no result)') problems.push(`no tool result in the expanded step: ${JSON.stringify(found)}`);
    if (!found.sent || !found.messages.length || !found.messages.some((m) => /^#\d+ (system|user)/.test(m))) problems.push(`no messages sent in the expanded step: ${JSON.stringify(found)}`);
    if (!found.reply || !found.reply.includes('→ ')) problems.push(`no reply with its tool call in the expanded step: ${JSON.stringify(found)}`);
    console.log(`viewer check: ${found.title}, ${found.steps} steps; expanded one ${found.sent}, replied ${JSON.stringify((found.reply || '').slice(0, 60))}, shows ${found.call} → ${JSON.stringify(found.result.slice(0, 60))}`);
  }

  // Open runs until a step's badge says it first sent a masked or compacted
  // message; expand it and its call's messages: that message is marked as
  // such and, opened, shows its text (and a masked one the original).
  const links = await page.$$eval('#runs a.view', (all) => all.length);
  let edited = null;
  for (let i = 0; i < Math.min(links, 200) && !edited; i++) {
    await page.evaluate((index) => document.querySelectorAll('#runs a.view')[index].click(), i);
    edited = await page.evaluate(async () => {
      const tick = () => new Promise((done) => setTimeout(done, 50));
      const step = [...document.querySelectorAll('#viewer details.step')]
        .find((d) => d.querySelector('summary .badge.masked, summary .badge.compacted'));
      if (!step) { return null; }
      step.querySelector('summary').click();
      await tick();
      const lists = [...step.querySelectorAll('details.sent')];
      lists.forEach((list) => list.querySelector('summary').click());
      await tick();
      const message = lists.flatMap((list) => [...list.querySelectorAll('details.msg.masked, details.msg.compacted')])
        .find((m) => m.querySelector('.badge.new'));
      if (!message) { return { step: step.dataset.step, missing: true }; }
      message.querySelector('summary').click();
      await tick();
      const original = message.querySelector('pre.original');
      const unsent = message.querySelector('.unsent-original');
      step.scrollIntoView();
      return {
        title: document.querySelector('#viewer h2').textContent, step: step.dataset.step,
        summary: message.querySelector('summary').textContent,
        body: message.querySelector('pre.body') && message.querySelector('pre.body').textContent,
        original: original && original.textContent, unsent: Boolean(unsent), masked: message.classList.contains('masked'),
      };
    });
  }
  if (!edited) {
    if (sweep) problems.push('no run sent a masked or compacted message');
    else console.log('viewer check: no run sent a masked or compacted message');
  } else {
    if (edited.missing) problems.push(`step ${edited.step} has a badge but no masked or compacted message new in it`);
    else {
      const kind = edited.masked ? 'masked' : 'compacted';
      if (!edited.summary.includes(kind) || !edited.body) problems.push(`the ${kind} message is not shown as such: ${JSON.stringify(edited)}`);
      if (edited.masked && !edited.original && !edited.unsent) problems.push(`the masked message neither shows its original nor says none was sent: ${JSON.stringify(edited)}`);
      console.log(`viewer check: ${edited.title}, step ${edited.step} sent ${JSON.stringify(edited.summary.slice(0, 70))}` +
        (edited.original ? ` in place of ${JSON.stringify(edited.original.slice(0, 50))}` : ''));
      if (shot) { await page.screenshot({ path: shot, fullPage: false }); console.log(`screenshot: ${shot}`); }
    }
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

    // The frontier (issue 40): cost against retention, overall first, then
    // per scenario; one drawn point per strategy of the table, each labelled
    // with its variant, both axes labelled, and the optimal points named in
    // the caption.
    const frontier = await page.evaluate(() => {
      const chart = (figure) => {
        const points = [...figure.querySelectorAll('svg g.point')];
        return {
          variants: points.map((p) => p.dataset.variant),
          labelled: points.filter((p) => { const t = p.querySelector('text'); return t && t.textContent.startsWith(p.dataset.variant); }).length,
          drawn: points.filter((p) => { const b = p.querySelector('circle').getBoundingClientRect(); return b.width > 0 && b.height > 0; }).length,
          optimal: points.filter((p) => p.classList.contains('optimal')).map((p) => p.dataset.variant),
          axes: [...figure.querySelectorAll('svg text.axis-label')].map((t) => t.textContent),
          caption: figure.querySelector('figcaption') ? figure.querySelector('figcaption').textContent : '',
        };
      };
      const figures = [...document.querySelectorAll('figure.frontier')];
      const overall = document.querySelector('figure.frontier.overall');
      return {
        strategies: [...document.querySelectorAll('#by-variant tbody tr')].map((r) => r.cells[0].textContent),
        overallFirst: figures.length > 0 && figures[0] === overall,
        overall: overall && chart(overall),
        scenarios: [...document.querySelectorAll('figure.frontier.scenario')].map((f) => Object.assign({ scenario: f.dataset.scenario }, chart(f))),
      };
    });
    const same = (a, b) => JSON.stringify([...a].sort()) === JSON.stringify([...b].sort());
    if (!frontier.overall || !frontier.overallFirst) problems.push(`no overall frontier before the per-scenario ones: ${JSON.stringify(frontier).slice(0, 300)}`);
    else {
      const o = frontier.overall;
      if (!same(o.variants, frontier.strategies) || o.drawn !== o.variants.length || o.labelled !== o.variants.length) problems.push(`the overall frontier has not one drawn, labelled point per strategy: ${JSON.stringify(o)} against ${frontier.strategies}`);
      if (o.axes.length !== 2 || !o.axes.some((a) => a.startsWith('retention')) || !o.axes.some((a) => a.startsWith('cost'))) problems.push(`the overall frontier's axes are not labelled: ${o.axes}`);
      if (!o.optimal.every((v) => o.caption.includes(v))) problems.push(`the caption does not name the optimal points ${o.optimal}: ${o.caption}`);
      console.log(`viewer check: frontier of ${o.variants.length} strategies, ${o.caption}`);
    }
    if (frontier.scenarios.length === 0) problems.push('no per-scenario frontier');
    frontier.scenarios.forEach((s) => {
      if (s.variants.length < 2 || s.drawn !== s.variants.length || s.labelled !== s.variants.length || s.axes.length !== 2) problems.push(`frontier of ${s.scenario}: ${JSON.stringify(s)}`);
    });
    console.log(`viewer check: ${frontier.scenarios.length} per-scenario frontiers`);
    if (frontierShot) {
      // The overall frontier under its heading: the README's picture.
      await page.setViewport({ width: 1000, height: 1100 });
      const clip = await page.evaluate(() => {
        const top = document.querySelector('#frontier').getBoundingClientRect();
        const chart = document.querySelector('#frontier-overall').getBoundingClientRect();
        return { x: 0, y: top.top + window.scrollY - 8, width: 1000, height: chart.bottom - top.top + 16 };
      });
      await page.screenshot({ path: frontierShot, clip });
      console.log(`screenshot: ${frontierShot}`);
    }
  }
});
