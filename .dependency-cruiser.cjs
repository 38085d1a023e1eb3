/**
 * Imports run one way (DESIGN.md, docs/architecture.md):
 *   main, server, app, bootstrap, background → web, cli → modules → outbox, http, context
 *   → access, crypto → db → errors, config, clock, html, logger
 * A module may import only from its own layer or the layers below it, and the feature folders under
 * src/modules/ import each other without a cycle. `npm run lint:imports` (run in CI) fails on any import
 * that points up or closes a cycle.
 */
const layers = [
  { name: 'entry', path: '^src/(main|server|app|bootstrap|background|tracing)\\.ts$' },
  { name: 'edge', path: '^src/(web|cli)/' },
  { name: 'modules', path: '^src/modules/' },
  { name: 'kit', path: '^src/(outbox|http)/|^src/context\\.ts$' },
  { name: 'access', path: '^src/(access|crypto)/' },
  { name: 'db', path: '^src/db/' },
  { name: 'base', path: '^src/(errors|config|clock|html|logger)\\.ts$' },
]

const forbidden = layers.flatMap((layer, index) => {
  const above = layers.slice(0, index).map((upper) => upper.path)
  if (above.length === 0) return []
  return [
    {
      name: `no-upward-from-${layer.name}`,
      comment: `${layer.name} must not import from a layer above it (${layers
        .slice(0, index)
        .map((upper) => upper.name)
        .join(', ')})`,
      severity: 'error',
      from: { path: layer.path },
      to: { path: above.join('|') },
    },
  ]
})

forbidden.push(
  {
    name: 'no-circular',
    comment: 'a cycle of imports has no layer order',
    severity: 'error',
    from: { path: '^src/' },
    to: { circular: true, dependencyTypesNot: ['type-only'] },
  },
  {
    name: 'no-cycle-between-modules',
    comment:
      'the feature folders under src/modules/ depend on each other one way: each concept has one owner, ' +
      'and a module that needs another\'s is above it (docs/architecture.md)',
    severity: 'error',
    scope: 'folder',
    from: { path: '^src/modules/[^/]+$' },
    to: { path: '^src/modules/[^/]+$', circular: true },
  },
  {
    name: 'no-unlayered',
    comment: 'every file under src/ belongs to a layer: add it to .dependency-cruiser.cjs',
    severity: 'error',
    from: { path: '^src/', pathNot: layers.map((layer) => layer.path).join('|') },
    to: {},
  },
  {
    name: 'src-not-from-tests',
    comment: 'production code never imports tests, benchmarks or their helpers',
    severity: 'error',
    from: { path: '^src/' },
    to: { path: '^(test|bench)/' },
  },
)

module.exports = {
  forbidden,
  options: {
    doNotFollow: { path: 'node_modules' },
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
    enhancedResolveOptions: { exportsFields: ['exports'], conditionNames: ['import', 'require', 'node', 'default'] },
  },
}
