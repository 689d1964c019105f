import { readFileSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { costOf, costPage, multiRegionCostOf } from './model';
import { CUSTOM_DOMAIN, multiRegionTemplates, stageTemplate } from './template';

/**
 * `npm run cost`: docs/cost.md from the synthesized `prod` template and the price table;
 * `npm run cost -- --check` exits 1 when the committed page is not what the template gives.
 */
export const COST_PAGE = join(resolve(import.meta.dirname, '../..'), 'docs', 'cost.md');
export const COST_STAGE = 'prod';

const USAGE = `Usage: npm run cost [-- --check]

Writes docs/cost.md from the synthesized ${COST_STAGE} template and infra/cost/prices.ts.
  --check      write nothing; exit 1 when docs/cost.md is not what they give
  -h, --help   this text`;

/** The multi-Region stage in its two shapes, in the US Region set. */
export const COST_MULTI_REGION = [
  { regions: 'us-east-1,us-east-2', witnessRegion: 'us-west-2' },
  { regions: 'us-east-1,us-east-2,us-west-2' },
] as const;

export const multiRegionCosts = () =>
  COST_MULTI_REGION.map((context) => {
    const { table, apis } = multiRegionTemplates(COST_STAGE, context);
    return {
      regions: 'witnessRegion' in context ? `${context.regions}, witness ${context.witnessRegion}` : context.regions,
      report: multiRegionCostOf(table, apis),
    };
  });

export const renderCostPage = () =>
  costPage({
    stage: COST_STAGE,
    front: costOf(stageTemplate(COST_STAGE)),
    customDomain: costOf(stageTemplate(COST_STAGE, CUSTOM_DOMAIN)),
    multiRegion: multiRegionCosts(),
  });

if (process.argv[1] && resolve(process.argv[1]) === import.meta.filename) {
  let values;
  try {
    ({ values } = parseArgs({
      options: { check: { type: 'boolean' }, help: { type: 'boolean', short: 'h' } },
      strict: true,
    }));
  } catch (error) {
    // Refused before synthesizing, so a mistyped flag never rewrites the page.
    console.error(`cost: ${(error as Error).message}. npm run cost -- --help says more.`);
    process.exit(2);
  }
  if (values.help) {
    console.log(USAGE);
    process.exit(0);
  }
  const page = renderCostPage();
  if (values.check) {
    const current = (() => {
      try {
        return readFileSync(COST_PAGE, 'utf8');
      } catch {
        return '';
      }
    })();
    if (current !== page) {
      console.error('cost: docs/cost.md is not what the template and infra/cost/prices.ts give: run npm run cost');
      process.exit(1);
    }
    console.log('cost: docs/cost.md is current');
  } else {
    writeFileSync(COST_PAGE, page);
    console.log(`cost: wrote docs/cost.md (${page.split('\n').length} lines)`);
  }
}
