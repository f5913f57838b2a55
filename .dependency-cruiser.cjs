/*
 * The import rules of the gateway's layers (docs/architecture.md, "What each folder may
 * import"), checked by `npm run lint:imports` in `npm test`. A change that crosses a boundary
 * fails with the name of the rule it breaks. Tests, benchmarks and scripts may import anything.
 *
 * Layers, from the bottom:
 *   kernel      src/kernel, src/store, src/config.ts, src/build.ts: what every product uses
 *   text        src/search-text: the analyzer, query parsing, snippets both engines share
 *   connectors  connectors/: adapters for blob, graph, search and embeddings
 *   search      src/search: the search service over the engines, handed the products' sources
 *   transport   src/auth, src/mcp, src/http, src/console: OAuth, the MCP call pipeline, HTTP, the web console's shell
 *   products    src/alignbase, src/atmina, src/brain: one folder each, never importing another
 *   composition the files directly in src/ (app.ts, products.ts, open-services.ts …), src/cli,
 *               src/admin: picks the products and wires what crosses them
 */
const KERNEL = '^src/(kernel|store)/|^src/(config|build)[.]ts$';
const TEXT = '^src/search-text/';
const CONNECTORS = '^connectors/';
const SEARCH = '^src/search/';
const TRANSPORT = '^src/(auth|mcp|http|console)/';
const PRODUCTS = '^src/(alignbase|atmina|brain)/';
// Every file directly in src/ but the kernel's two is the composition root.
const COMPOSITION = '^src/(?!(config|build)[.]ts$)[^/]+[.]ts$|^src/(cli|admin)/';
const any = (...patterns) => patterns.join('|');

/** A rule that lets files under `from` import only project files matching `allowed`. */
function onlyImports(name, comment, from, allowed) {
  return { name, comment, severity: 'error', from: { path: from }, to: { path: '^(src|connectors)/', pathNot: allowed } };
}

module.exports = {
  forbidden: [
    {
      name: 'no-circular',
      comment: 'Two modules that import each other (directly or through others) cannot be read, tested or moved apart; one of them owns the shared part.',
      severity: 'error',
      from: { path: '^(src|connectors)/' },
      to: { circular: true },
    },
    {
      name: 'product-imports-another-product',
      comment: 'A product never imports another product; what crosses products is wired in the composition root (src/products.ts, src/open-services.ts).',
      severity: 'error',
      from: { path: '^src/(alignbase|atmina|brain)/' },
      to: { path: PRODUCTS, pathNot: '^src/$1/' },
    },
    {
      name: 'product-imports-composition',
      comment: 'A product offers its parts through its index.ts; it does not reach back into the composition root, the CLI or the admin operations.',
      severity: 'error',
      from: { path: PRODUCTS },
      to: { path: COMPOSITION },
    },
    {
      name: 'composition-imports-product-internals',
      comment: "The composition root takes a product's parts from its index.ts, the product's one public surface, never from the files behind it.",
      severity: 'error',
      from: { path: COMPOSITION },
      to: { path: PRODUCTS, pathNot: '^src/(alignbase|atmina|brain)/index[.]ts$' },
    },
    onlyImports(
      'kernel-imports-only-kernel',
      'The kernel names no product and no layer above it: errors, text, the caller, the directory, audit, outbox, tokens, mail, health, the org file reader and the store.',
      KERNEL,
      any(KERNEL, CONNECTORS),
    ),
    onlyImports(
      'search-text-imports-only-kernel',
      "Search's text machinery (analyzer, query parsing, snippets) sits beside the kernel: both engines use it, so it knows no engine, no service and no product.",
      TEXT,
      any(KERNEL, TEXT),
    ),
    onlyImports(
      'connector-imports-product',
      'Connectors are adapters: they import the kernel, the shared text machinery and their own contract, nothing of a product or of the search service.',
      CONNECTORS,
      any(KERNEL, TEXT, CONNECTORS),
    ),
    onlyImports(
      'search-service-imports-product',
      "The search service is handed each product's search sources by the composition root; it imports no product.",
      SEARCH,
      any(KERNEL, TEXT, CONNECTORS, SEARCH),
    ),
    onlyImports(
      'transport-imports-product',
      'OAuth, the MCP call pipeline, HTTP and the console know no product: tools, access gates, limiters, endpoints and console pages come from the product catalogue.',
      TRANSPORT,
      any(KERNEL, TEXT, CONNECTORS, TRANSPORT),
    ),
  ],
  options: {
    includeOnly: '^(src|connectors)/',
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
    doNotFollow: { path: 'node_modules' },
  },
};
