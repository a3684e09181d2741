"""Scenario 4: a dependency upgrade (webpack 4 -> 5), many mid-size outputs."""

from __future__ import annotations

import json

from .randomness import b64, hexid, pick
from .session import Session


NPM_PACKAGES = [
    ("@babel/core", "7.12.3", "7.24.4"), ("@babel/preset-env", "7.12.1", "7.24.4"), ("@babel/preset-react", "7.12.1", "7.24.1"),
    ("@babel/runtime", "7.12.5", "7.24.4"), ("babel-loader", "8.1.0", "9.1.3"), ("webpack", "4.46.0", "5.91.0"),
    ("webpack-cli", "3.3.12", "5.1.4"), ("webpack-dev-server", "3.11.3", "4.15.2"), ("html-webpack-plugin", "4.5.2", "5.6.0"),
    ("mini-css-extract-plugin", "1.6.2", "2.9.0"), ("css-loader", "5.2.7", "6.11.0"), ("style-loader", "2.0.0", "3.3.4"),
    ("postcss-loader", "4.3.0", "7.3.4"), ("sass-loader", "10.5.2", "13.3.3"), ("terser-webpack-plugin", "4.2.3", "5.3.10"),
    ("copy-webpack-plugin", "6.4.1", "11.0.0"), ("file-loader", "6.2.0", "-"), ("url-loader", "4.1.1", "-"),
    ("jest", "26.6.3", "29.7.0"), ("babel-jest", "26.6.3", "29.7.0"), ("jest-environment-jsdom", "-", "29.7.0"),
    ("@testing-library/react", "11.2.7", "14.3.1"), ("@testing-library/jest-dom", "5.11.10", "6.4.2"),
    ("eslint", "7.32.0", "8.57.0"), ("eslint-webpack-plugin", "2.7.0", "4.1.0"), ("react-refresh", "0.9.0", "0.14.0"),
    ("sass", "1.32.13", "1.75.0"), ("postcss", "8.2.15", "8.4.38"), ("autoprefixer", "10.2.6", "10.4.19"),
]
NPM_TRANSITIVE = ["acorn", "ajv", "ajv-keywords", "browserslist", "caniuse-lite", "chokidar", "enhanced-resolve", "es-module-lexer",
                  "eslint-scope", "events", "glob-to-regexp", "graceful-fs", "json-parse-even-better-errors", "loader-runner",
                  "mime-types", "neo-async", "schema-utils", "tapable", "watchpack", "webpack-sources", "terser", "jest-worker",
                  "serialize-javascript", "source-map", "@webassemblyjs/ast", "@webassemblyjs/wasm-edit", "@webassemblyjs/wasm-parser",
                  "@types/estree", "@types/eslint-scope", "electron-to-chromium", "node-releases", "picocolors", "fast-deep-equal",
                  "json-schema-traverse", "@jridgewell/trace-mapping", "@jridgewell/source-map", "commander", "randombytes",
                  "supports-color", "has-flag", "merge-stream", "@babel/helper-plugin-utils", "@babel/helper-compilation-targets",
                  "@babel/traverse", "@babel/generator", "@babel/parser", "@babel/types", "@babel/template", "semver", "debug", "ms",
                  "convert-source-map", "gensync", "json5", "jsesc", "lru-cache", "yallist", "escalade", "update-browserslist-db",
                  "find-cache-dir", "make-dir", "pkg-dir", "find-up", "locate-path", "p-locate", "p-limit", "yocto-queue",
                  "postcss-value-parser", "nanoid", "source-map-js", "icss-utils", "postcss-modules-scope", "klona", "neo-async",
                  "jsdom", "whatwg-url", "tough-cookie", "parse5", "cssstyle", "data-urls", "nwsapi", "saxes", "w3c-xmlserializer"]


def npm_version(rng) -> str:
    return f"{rng.randint(0, 9)}.{rng.randint(0, 30)}.{rng.randint(0, 20)}"


def npm_lock_entry(rng, name: str, version: str, sign: str = " ") -> list[str]:
    base = name.split("/")[-1]
    lines = [f'    "node_modules/{name}": {{', f'      "version": "{version}",',
             f'      "resolved": "https://registry.npmjs.org/{name}/-/{base}-{version}.tgz",',
             f'      "integrity": "sha512-{b64(rng, 64)}",', '      "dev": true,']
    if rng.random() < 0.5:
        deps = pick(rng, NPM_TRANSITIVE, rng.randint(1, 4))
        lines.append('      "dependencies": {')
        lines += [f'        "{d}": "^{npm_version(rng)}"{"," if i < len(deps) - 1 else ""}' for i, d in enumerate(deps)]
        lines.append("      },")
    lines.append(f'      "engines": {{ "node": ">={rng.choice(["6.9.0", "10.13.0", "12.13.0", "14.15.0"])}" }}')
    lines.append("    },")
    return [sign + l for l in lines]


def npm_lock_diff(rng, n_entries: int) -> str:
    out = ["diff --git a/package-lock.json b/package-lock.json", f"index {hexid(rng, 7)}..{hexid(rng, 7)} 100644",
           "--- a/package-lock.json", "+++ b/package-lock.json"]
    line = rng.randint(900, 4000)
    for _ in range(n_entries):
        name = rng.choice(NPM_TRANSITIVE)
        old, new = npm_version(rng), npm_version(rng)
        out.append(f"@@ -{line},{9} +{line},{9} @@")
        out += npm_lock_entry(rng, name, old, "-")
        out += npm_lock_entry(rng, name, new, "+")
        line += rng.randint(40, 400)
    return "\n".join(out) + "\n"


def npm_ls_tree(rng, root: str, top: list[str], depth_items: int) -> str:
    out = [f"storefront-monorepo@3.8.0 /work/storefront", f"└─┬ {root}"]
    for i, name in enumerate(top):
        last = i == len(top) - 1
        out.append(f"  {'└' if last else '├'}─┬ {name}@{npm_version(rng)}")
        kids = pick(rng, NPM_TRANSITIVE, rng.randint(2, depth_items))
        for j, kid in enumerate(kids):
            klast = j == len(kids) - 1
            dedupe = " deduped" if rng.random() < 0.4 else ""
            invalid = ' invalid: "^4.0.0" from node_modules/' + name if rng.random() < 0.05 else ""
            out.append(f"  {' ' if last else '│'} {'└' if klast else '├'}── {kid}@{npm_version(rng)}{dedupe}{invalid}")
    return "\n".join(out) + "\n"


WEBPACK_ERRORS = [
    ("node_fs", "[webpack-cli] Invalid configuration object. Webpack has been initialized using a configuration object that does not match the API schema.\n - configuration.node should be one of these:\n   false | object { __dirname?, __filename?, global? }\n   -> Include polyfills or mocks for various node stuff.\n   Details:\n    * configuration.node has an unknown property 'fs'. These properties are valid:\n      object { __dirname?, __filename?, global? }\n      -> Options object for node compatibility features.",
     "  node: {\n    fs: 'empty',\n  },\n", "  // webpack 5: node core modules are no longer polyfilled; see resolve.fallback\n",
     "`node: { fs: 'empty' }` is gone in webpack 5; the equivalent is `resolve.fallback: { fs: false }`, which the polyfill fix will add anyway."),
    ("named_modules", "[webpack-cli] Invalid configuration object. Webpack has been initialized using a configuration object that does not match the API schema.\n - configuration.optimization has an unknown property 'namedModules'. These properties are valid:\n   object { checkWasmTypes?, chunkIds?, concatenateModules?, emitOnErrors?, flagIncludedChunks?, innerGraph?, mangleExports?, mangleWasmImports?, mergeDuplicateChunks?, minimize?, minimizer?, moduleIds?, noEmitOnErrors?, nodeEnv?, portableRecords?, providedExports?, realContentHash?, removeAvailableModules?, removeEmptyChunks?, runtimeChunk?, sideEffects?, splitChunks?, usedExports? }\n   -> Enables/Disables integrated optimizations.\n   Did you mean optimization.moduleIds: \"named\" (BREAKING CHANGE since webpack 5)?",
     "    namedModules: true,\n", "    moduleIds: 'named',\n",
     "`optimization.namedModules` became `optimization.moduleIds: 'named'`; webpack even suggests it."),
    ("terser", "[webpack-cli] Invalid options object. Terser Plugin has been initialized using an options object that does not match the API schema.\n - options has an unknown property 'sourceMap'. These properties are valid:\n   object { test?, include?, exclude?, terserOptions?, extractComments?, parallel?, minify? }",
     "      new TerserPlugin({ sourceMap: true, parallel: true, extractComments: false }),\n", "      new TerserPlugin({ parallel: true, extractComments: false }),\n",
     "terser-webpack-plugin 5 takes source maps from `devtool`; the `sourceMap` option has to go."),
    ("polyfills", None, None, None,
     "Webpack 5 no longer polyfills node core modules. The storefront pulls `crypto`, `stream`, `buffer` and `path` through `jsonwebtoken`, `readable-stream` and `@acme/utils`; the right fix is `resolve.fallback` with browser polyfills for the ones we need and `false` for the rest, plus a `ProvidePlugin` for `process` and `Buffer`."),
    ("css_hmr", "ERROR in ./src/styles/main.scss\nModule build failed (from ../../node_modules/mini-css-extract-plugin/dist/loader.js):\nValidationError: Invalid options object. Mini CSS Extract Plugin Loader has been initialized using an options object that does not match the API schema.\n - options has an unknown property 'hmr'. These properties are valid:\n   object { publicPath?, emit?, esModule?, layer?, defaultExport? }",
     "          options: { hmr: isDev, reloadAll: true },\n", "          options: {},\n",
     "mini-css-extract-plugin 2 does HMR by itself; `hmr` and `reloadAll` are gone from the loader options."),
    ("postcss", "ERROR in ./src/styles/main.scss\nModule build failed (from ../../node_modules/postcss-loader/dist/cjs.js):\nValidationError: Invalid options object. PostCSS Loader has been initialized using an options object that does not match the API schema.\n - options has an unknown property 'plugins'. These properties are valid:\n   object { postcssOptions?, execute?, sourceMap?, implementation? }",
     "          options: { plugins: [require('autoprefixer')()] },\n", "          options: { postcssOptions: { plugins: ['autoprefixer'] } },\n",
     "postcss-loader moved `plugins` under `postcssOptions`."),
    ("sass", "ERROR in ./src/styles/main.scss\nModule build failed (from ../../node_modules/sass-loader/dist/cjs.js):\nValidationError: Invalid options object. Sass Loader has been initialized using an options object that does not match the API schema.\n - options has an unknown property 'prependData'. These properties are valid:\n   object { implementation?, api?, sassOptions?, additionalData?, sourceMap?, webpackImporter?, warnRuleAsWarning? }",
     "          options: { prependData: `@import \"~@acme/ui/tokens\";` },\n", "          options: { additionalData: `@import \"~@acme/ui/tokens\";` },\n",
     "sass-loader renamed `prependData` to `additionalData`."),
    ("copy", "[webpack-cli] Invalid options object. Copy Plugin has been initialized using an options object that does not match the API schema.\n - options[0] misses the property 'patterns'. Should be:\n   [non-empty string | object { from, to?, context?, globOptions?, filter?, toType?, force?, priority?, info?, transform?, transformAll?, noErrorOnMissing? }, ...] (should not have fewer than 1 item)",
     "    new CopyPlugin([{ from: 'public', to: '.' }]),\n", "    new CopyPlugin({ patterns: [{ from: 'public', to: '.', globOptions: { ignore: ['**/index.html'] } }] }),\n",
     "copy-webpack-plugin takes `{ patterns: [...] }` now, and `public/index.html` must be ignored because html-webpack-plugin emits it."),
    ("file_loader", "WARNING in ./src/assets/logo.svg\nModule Warning (from ../../node_modules/file-loader/dist/cjs.js):\nfile-loader is deprecated in webpack 5; use asset modules (type: 'asset/resource') instead. Assets are emitted twice: asset logo.4f1e2a.svg and asset 7d3c9b1e0a.svg (same content).",
     "      {\n        test: /\\.(png|jpe?g|gif|svg|woff2?)$/,\n        use: [{ loader: 'url-loader', options: { limit: 8192, name: 'static/[name].[hash:6].[ext]' } }],\n      },\n",
     "      {\n        test: /\\.(png|jpe?g|gif|svg|woff2?)$/,\n        type: 'asset',\n        parser: { dataUrlCondition: { maxSize: 8192 } },\n        generator: { filename: 'static/[name].[contenthash:6][ext]' },\n      },\n",
     "url-loader/file-loader double-emit under webpack 5; asset modules (`type: 'asset'` with an 8 KiB inline limit) replace both."),
]


def webpack_noise(rng, app: str, n_modules: int) -> list[str]:
    out = []
    for _ in range(n_modules):
        d = rng.choice(["components", "pages", "hooks", "store", "api", "utils", "styles", "i18n"])
        out.append(f"  modules by path ./src/{d}/{rng.choice(['', 'checkout/', 'account/', 'product/', 'cart/'])} {rng.uniform(2, 400):.1f} KiB {rng.randint(2, 90)} modules")
    for _ in range(max(2, n_modules // 3)):
        pkg = rng.choice(NPM_TRANSITIVE + [p for p, _, _ in NPM_PACKAGES])
        out.append(f"  modules by path ../../node_modules/{pkg}/ {rng.uniform(1, 800):.1f} KiB {rng.randint(1, 120)} modules")
    return out


def webpack_build(rng, app: str, error: tuple | None, polyfill_sites: list[str], warnings: int) -> str:
    out = [f"> @acme/{app}@3.8.0 build", f"> webpack --mode production --config webpack.config.js", ""]
    if error and error[0] in ("node_fs", "named_modules", "terser", "copy"):
        out.append(error[1])
        return "\n".join(out) + "\n"
    out.append(f"assets by status {rng.uniform(1.2, 3.4):.2f} MiB [cached] {rng.randint(8, 30)} assets")
    for chunk in ["main", "vendors", "runtime", "checkout", "account", "product"]:
        out.append(f"asset {chunk}.{hexid(rng, 20)}.js {rng.uniform(1, 900):.0f} KiB [emitted] [immutable] [minimized]{' [big]' if rng.random() < 0.3 else ''} (name: {chunk})")
    out += webpack_noise(rng, app, rng.randint(55, 90))
    for _ in range(rng.randint(2, 5)):
        pkg = rng.choice(NPM_TRANSITIVE)
        out += ["", f"WARNING in ../../node_modules/{pkg}/lib/{rng.choice(['index', 'loader', 'compat', 'require'])}.js {rng.randint(10, 400)}:{rng.randint(1, 60)}-{rng.randint(61, 90)}",
                "Critical dependency: the request of a dependency is an expression",
                f" @ ../../node_modules/{pkg}/lib/index.js {rng.randint(1, 40)}:{rng.randint(0, 30)}-{rng.randint(31, 60)}",
                f" @ ./src/{rng.choice(['api', 'utils', 'store'])}/{rng.choice(['client', 'index', 'session'])}.js {rng.randint(1, 40)}:0-{rng.randint(20, 60)}",
                f" @ ./src/index.jsx {rng.randint(1, 30)}:0-{rng.randint(20, 50)}"]
    out.append(f"  runtime modules {rng.uniform(5, 12):.1f} KiB {rng.randint(10, 20)} modules")
    out.append(f"  orphan modules {rng.uniform(20, 90):.1f} KiB [orphan] {rng.randint(10, 60)} modules")
    if error and error[0] == "polyfills":
        for site in polyfill_sites:
            mod, frm = site.split("|")
            out += [f"ERROR in {frm}", f"Module not found: Error: Can't resolve '{mod}' in '/work/storefront/{frm.rsplit('/', 1)[0].lstrip('./').replace('../../', '')}'", "",
                    "BREAKING CHANGE: webpack < 5 used to include polyfills for node.js core modules by default.",
                    "This is no longer the case. Verify if you need this module and configure a polyfill for it.", "",
                    "If you want to include a polyfill, you need to:",
                    "\t- add a fallback 'resolve.fallback: { \"" + mod + "\": require.resolve(\"" + mod + "-browserify\") }'",
                    "\t- install '" + mod + "-browserify'", "If you don't want to include a polyfill, you can use an empty module like this:",
                    "\tresolve.fallback: { \"" + mod + "\": false }", ""]
    elif error:
        out.append(error[1])
    for _ in range(warnings):
        out += ["", f"WARNING in asset size limit: The following asset(s) exceed the recommended size limit (244 KiB).",
                f"Assets: \n  vendors.{hexid(rng, 20)}.js ({rng.uniform(300, 900):.0f} KiB)"]
    status = "compiled with 1 error" if error else (f"compiled with {warnings} warnings" if warnings else "compiled successfully")
    out.append(f"webpack 5.91.0 {status} in {rng.randint(14000, 52000)} ms")
    return "\n".join(out) + "\n"


JEST_ERRORS = [
    ("jsdom", "● Validation Error:\n\n  Test environment jest-environment-jsdom cannot be found. Make sure the testEnvironment configuration option points to an existing node module.\n\n  Configuration Documentation:\n  https://jestjs.io/docs/configuration\n\n\nAs of Jest 28 \"jest-environment-jsdom\" is no longer shipped by default, make sure to install it separately.",
     "  testEnvironment: 'jsdom',\n", "  testEnvironment: 'jest-environment-jsdom',\n",
     "Jest 28+ no longer ships jsdom; it needs `jest-environment-jsdom` installed and named."),
    ("testurl", "● Validation Warning:\n\n  Unknown option \"testURL\" with value \"http://localhost/\" was found.\n  This is probably a typing mistake. Fixing it will remove this message.\n\n  Configuration Documentation:\n  https://jestjs.io/docs/configuration",
     "  testURL: 'http://localhost/',\n", "  testEnvironmentOptions: { url: 'http://localhost/' },\n",
     "`testURL` moved to `testEnvironmentOptions.url`."),
    ("timers", None, "  timers: 'legacy',\n", "  fakeTimers: { legacyFakeTimers: true },\n",
     "`timers: 'legacy'` became `fakeTimers: { legacyFakeTimers: true }`; the debounce tests depend on legacy timers."),
    ("snapshots", None, "  snapshotSerializers: ['@emotion/jest/serializer'],\n",
     "  snapshotSerializers: ['@emotion/jest/serializer'],\n  snapshotFormat: { escapeString: true, printBasicPrototype: true },\n",
     "Jest 29 changed the default snapshot format (no `Object {` prefixes, no escaping). Pinning the old format keeps the existing snapshots valid; re-recording them can be a separate change."),
]


def jest_output(rng, app: str, error: tuple | None, suites: list[str]) -> str:
    out = [f"> @acme/{app}@3.8.0 test", "> jest --ci --verbose", ""]
    if error and error[0] in ("jsdom",):
        out.append(error[1])
        return "\n".join(out) + "\n"
    if error and error[0] == "testurl":
        out += [error[1], ""]
    failed = 0
    snap_failed = 0
    for suite in suites:
        fail = False
        if error and error[0] == "timers" and "debounce" in suite:
            fail = True
        if error and error[0] == "snapshots" and rng.random() < 0.3:
            fail = True
        if fail:
            failed += 1
            out.append(f"FAIL src/{suite}")
            if error[0] == "timers":
                out += [f"  ● {suite.split('/')[-1].split('.')[0]} › fires once after the quiet period", "",
                        "    expect(jest.fn()).toHaveBeenCalledTimes(expected)", "", "    Expected number of calls: 1", "    Received number of calls: 0", "",
                        f"      {rng.randint(20, 60)} |     jest.advanceTimersByTime(300);", f"    > {rng.randint(61, 70)} |     expect(onChange).toHaveBeenCalledTimes(1);",
                        "         |                      ^", "", f"      at Object.<anonymous> (src/{suite}:{rng.randint(61, 70)}:22)", ""]
            else:
                snaps = rng.randint(1, 6)
                snap_failed += snaps
                out += [f"  ● {suite.split('/')[-1].split('.')[0]} › renders {rng.choice(['the default state', 'with a discount', 'loading', 'an error'])}", "",
                        "    expect(received).toMatchSnapshot()", "", f"    Snapshot name: `renders 1`", "", "    - Snapshot  - 3", "    + Received  + 3", "",
                        "    - Object {", "    + {", "    -   \"props\": Object {", "    +   \"props\": {", "    -   \"className\": \"price price--sale\",",
                        "    +   \"className\": \"price price--sale\",", ""]
        else:
            out.append(f"PASS src/{suite} ({rng.uniform(0.3, 6):.2f} s)" if rng.random() < 0.4 else f"PASS src/{suite}")
        name = suite.split("/")[-1].split(".")[0]
        out.append(f"  {name}")
        for _ in range(rng.randint(4, 12)):
            what = rng.choice(["renders", "handles", "formats", "rejects", "calls", "keeps", "resets", "shows", "hides", "debounces"])
            obj = rng.choice(["the default state", "an empty cart", "a discounted price", "a network error", "the loading state",
                              "keyboard navigation", "the locale from context", "a missing image", "two quick changes", "pagination past the end"])
            mark = "✕" if fail and rng.random() < 0.3 else "✓"
            out.append(f"    {mark} {what} {obj} ({rng.randint(1, 180)} ms)")
    total = sum(rng.randint(3, 14) for _ in suites)
    out += ["", f"Test Suites: {failed and f'{failed} failed, ' or ''}{len(suites) - failed} passed, {len(suites)} total",
            f"Tests:       {failed and f'{failed * 2} failed, ' or ''}{total - failed * 2} passed, {total} total",
            f"Snapshots:   {snap_failed and f'{snap_failed} failed, ' or ''}{rng.randint(30, 90)} passed, {rng.randint(90, 120)} total",
            f"Time:        {rng.uniform(12, 60):.3f} s", "Ran all test suites."]
    return "\n".join(out) + "\n"


def webpack_config(app: str) -> str:
    return f"""const path = require('path');
const webpack = require('webpack');
const HtmlWebpackPlugin = require('html-webpack-plugin');
const MiniCssExtractPlugin = require('mini-css-extract-plugin');
const TerserPlugin = require('terser-webpack-plugin');
const CopyPlugin = require('copy-webpack-plugin');

const isDev = process.env.NODE_ENV !== 'production';

module.exports = {{
  entry: {{ main: './src/index.jsx' }},
  output: {{
    path: path.resolve(__dirname, 'dist'),
    filename: isDev ? '[name].js' : '[name].[contenthash].js',
    publicPath: '/{app}/',
  }},
  devtool: isDev ? 'eval-cheap-module-source-map' : 'source-map',
  resolve: {{
    extensions: ['.js', '.jsx'],
    alias: {{ '@': path.resolve(__dirname, 'src') }},
  }},
  node: {{
    fs: 'empty',
  }},
  module: {{
    rules: [
      {{ test: /\\.jsx?$/, exclude: /node_modules/, use: 'babel-loader' }},
      {{
        test: /\\.s?css$/,
        use: [
          {{
            loader: MiniCssExtractPlugin.loader,
          options: {{ hmr: isDev, reloadAll: true }},
          }},
          'css-loader',
          {{
            loader: 'postcss-loader',
          options: {{ plugins: [require('autoprefixer')()] }},
          }},
          {{
            loader: 'sass-loader',
          options: {{ prependData: `@import "~@acme/ui/tokens";` }},
          }},
        ],
      }},
      {{
        test: /\\.(png|jpe?g|gif|svg|woff2?)$/,
        use: [{{ loader: 'url-loader', options: {{ limit: 8192, name: 'static/[name].[hash:6].[ext]' }} }}],
      }},
    ],
  }},
  optimization: {{
    namedModules: true,
    splitChunks: {{ chunks: 'all' }},
    minimizer: [
      new TerserPlugin({{ sourceMap: true, parallel: true, extractComments: false }}),
    ],
  }},
  plugins: [
    new HtmlWebpackPlugin({{ template: 'public/index.html' }}),
    new MiniCssExtractPlugin({{ filename: '[name].[contenthash].css' }}),
    new CopyPlugin([{{ from: 'public', to: '.' }}]),
    new webpack.DefinePlugin({{ 'process.env.API_URL': JSON.stringify(process.env.API_URL) }}),
  ],
}};
"""


def changelog(rng, plugin: str, major: str) -> str:
    items = {
        "webpack": ["Node.js polyfills are no longer included automatically; use `resolve.fallback`", "`node` option reduced to `global`, `__filename`, `__dirname`",
                    "`optimization.namedModules` removed, use `optimization.moduleIds: 'named'`", "`optimization.noEmitOnErrors` renamed to `optimization.emitOnErrors`",
                    "asset modules replace raw-loader, url-loader and file-loader", "`[hash]` for assets deprecated in favour of `[contenthash]`",
                    "persistent caching with `cache: { type: 'filesystem' }`", "Module Federation", "`output.clean` to replace clean-webpack-plugin",
                    "minimum Node.js version 10.13.0", "`this.getOptions` for loaders; `loader-utils` options parsing deprecated"],
        "mini-css-extract-plugin": ["the `hmr` and `reloadAll` options were removed, HMR is supported out of the box", "minimum webpack version 5.1.0", "`esModule` defaults to `true`"],
        "postcss-loader": ["`plugins`, `parser`, `syntax` and `stringifier` moved into `postcssOptions`", "minimum Node.js 10.13", "`config` option reworked"],
        "sass-loader": ["`prependData` renamed to `additionalData`", "prefer `sass` (dart-sass) over `node-sass`", "minimum webpack 5"],
        "copy-webpack-plugin": ["options are now `{ patterns: [...] }` instead of an array", "`ignore` moved to `globOptions.ignore`", "minimum webpack 5"],
        "terser-webpack-plugin": ["the `sourceMap` option was removed; source maps follow `devtool`", "`cache` and `cacheKeys` removed, webpack 5 caching is used", "minimum webpack 5.1"],
        "html-webpack-plugin": ["`htmlWebpackPlugin.files.chunks` removed from template parameters", "minimum webpack 5.20", "`minify` defaults to `true` in production"],
        "jest": ["`jest-environment-jsdom` is no longer shipped; install it separately", "`testURL` removed, use `testEnvironmentOptions.url`",
                 "`timers` renamed to `fakeTimers`; legacy timers via `fakeTimers: { legacyFakeTimers: true }`", "default `snapshotFormat` changed to `{escapeString: false, printBasicPrototype: false}`",
                 "minimum Node.js 14.15"],
    }[plugin]
    lines = [f"## [{major}](https://github.com/webpack-contrib/{plugin}/compare/v{int(major.split('.')[0]) - 1}.{rng.randint(0, 9)}.{rng.randint(0, 9)}...v{major}) ({rng.randint(2020, 2022)}-{rng.randint(1, 12):02d}-{rng.randint(1, 28):02d})", "", "### ⚠ BREAKING CHANGES", ""]
    for item in items:
        lines.append(f"* {item} ([#{rng.randint(100, 16000)}](https://github.com/webpack/{plugin}/issues/{rng.randint(100, 16000)})) ([{hexid(rng, 7)}](https://github.com/webpack/{plugin}/commit/{hexid(rng, 40)}))")
    lines += ["", "### Features", ""]
    for _ in range(rng.randint(4, 9)):
        lines.append(f"* {rng.choice(['support', 'add', 'allow', 'improve'])} {rng.choice(['`[contenthash]` in more places', 'async loaders', 'ESM output', 'the `layer` option', 'better error messages for invalid options', 'typescript types', 'caching of results', 'the `publicPath: auto` value'])} ([#{rng.randint(100, 16000)}](https://github.com/webpack/{plugin}/issues/{rng.randint(100, 16000)})) ([{hexid(rng, 7)}](https://github.com/webpack/{plugin}/commit/{hexid(rng, 40)}))")
    lines += ["", "### Bug Fixes", ""]
    for _ in range(rng.randint(5, 12)):
        lines.append(f"* {rng.choice(['fix', 'avoid', 'handle', 'respect'])} {rng.choice(['source maps for empty chunks', 'a crash on windows paths', 'watch mode with symlinks', 'hashes of unchanged assets', 'the order of CSS chunks', 'memory leak in watch mode', 'relative `publicPath`'])} ([#{rng.randint(100, 16000)}](https://github.com/webpack/{plugin}/issues/{rng.randint(100, 16000)})) ([{hexid(rng, 7)}](https://github.com/webpack/{plugin}/commit/{hexid(rng, 40)}))")
    return "\n".join(lines) + "\n"


def s4_sources(rng) -> list[tuple[str, str]]:
    auth = """import jwt from 'jsonwebtoken';
import { readTokenFromStorage, writeTokenToStorage } from '@acme/utils/storage';

const ISSUER = 'https://auth.acme.shop';

// Decodes the session token to show the account menu before the API answers.
// Verification happens on the server; this only reads the claims.
export function sessionFromToken(token = readTokenFromStorage()) {
  if (!token) return null;
  const claims = jwt.decode(token, { json: true });
  if (!claims || claims.iss !== ISSUER) return null;
  return { customerId: claims.sub, name: claims.name, expiresAt: claims.exp * 1000 };
}

export function isExpired(session, now = Date.now()) {
  return !session || session.expiresAt <= now;
}

export function storeToken(token) {
  writeTokenToStorage(token);
}
"""
    paths = """const path = require('path');

// Joins CDN paths for product images; runs in the browser and in SSR.
function imageUrl(base, ...parts) {
  return base.replace(/\\/$/, '') + '/' + path.posix.join(...parts);
}

function extensionOf(file) {
  return path.extname(file).slice(1).toLowerCase();
}

module.exports = { imageUrl, extensionOf };
"""
    return [("apps/storefront/src/api/auth.js", auth), ("packages/utils/src/paths.js", paths)]


def build_dependency_upgrade() -> tuple[Session, dict]:
    s = Session("dependency-upgrade-webpack5")
    rng = s.rng
    s.tool("run_command", "Run a shell command in the repository root (npm, npx, node, git are available).",
           {"command": {"type": "string"}}, ["command"], 4000, "command failed")
    s.tool("read_file", "Read a file of the repository.", {"path": {"type": "string"}}, ["path"], 20, "ENOENT: no such file or directory")
    s.tool("edit_file", "Replace an exact string in a file.", {"path": {"type": "string"}, "old_string": {"type": "string"}, "new_string": {"type": "string"}},
           ["path", "old_string", "new_string"], 30, "old_string not found")
    plan: list[tuple] = []  # (tool, args, output, text)

    def add(tool, args, output, text):
        plan.append((tool, args, output, text))

    apps = ["storefront", "admin"]
    packages = ["ui", "utils"]
    add("read_file", {"path": "package.json"}, """{
  "name": "storefront-monorepo",
  "version": "3.8.0",
  "private": true,
  "workspaces": ["apps/*", "packages/*"],
  "engines": { "node": ">=18.17" },
  "scripts": {
    "build": "npm run build --workspaces --if-present",
    "test": "npm test --workspaces --if-present",
    "lint": "eslint . --ext .js,.jsx"
  },
  "devDependencies": {
    "@babel/core": "^7.12.3",
    "@babel/preset-env": "^7.12.1",
    "@babel/preset-react": "^7.12.1",
    "babel-loader": "^8.1.0",
    "eslint": "^7.32.0",
    "jest": "^26.6.3",
    "babel-jest": "^26.6.3",
    "webpack": "^4.46.0",
    "webpack-cli": "^3.3.12",
    "webpack-dev-server": "^3.11.3"
  }
}
""", "Upgrading the storefront monorepo from webpack 4 to 5, with the loaders, plugins, Babel and Jest that go with it. Starting from the root manifest: npm workspaces, shared build tooling hoisted to the root.")
    outdated = ["Package                      Current   Wanted   Latest  Location                      Depended by"]
    for name, cur, latest in NPM_PACKAGES:
        if cur == "-":
            continue
        outdated.append(f"{name:<28} {cur:<9} {cur:<8} {latest if latest != '-' else 'deprecated':<8} node_modules/{name:<{max(1, 30 - len(name))}} {rng.choice(['storefront-monorepo', '@acme/storefront', '@acme/admin', '@acme/ui'])}")
    add("run_command", {"command": "npm outdated --workspaces --long"}, "\n".join(outdated) + "\n",
        "Before changing anything: which of the build dependencies are behind and who depends on them.")
    add("run_command", {"command": "npm ls webpack --all"}, npm_ls_tree(rng, "webpack@4.46.0", [p for p, _, _ in NPM_PACKAGES if "webpack" in p or "loader" in p], 9),
        "Almost the whole build chain is on webpack-4-era majors. The dependency tree of webpack shows which plugins and loaders peer-depend on it.")
    add("run_command", {"command": "cat .nvmrc && node --version && npm --version"}, "18.19.1\nv18.19.1\n10.2.4\n",
        "Node version matters for webpack 5 (it needs 10.13+, our CI uses 18); checking the local toolchain matches CI.")
    for app in apps:
        add("read_file", {"path": f"apps/{app}/webpack.config.js"}, webpack_config(app),
            f"The `{app}` webpack config, to see which webpack-4-only options it uses before bumping versions.")
        add("read_file", {"path": f"apps/{app}/package.json"}, json.dumps({
            "name": f"@acme/{app}", "version": "3.8.0", "private": True,
            "scripts": {"start": "webpack serve --mode development", "build": "webpack --mode production --config webpack.config.js", "test": "jest --ci"},
            "dependencies": {"react": "^17.0.2", "react-dom": "^17.0.2", "@acme/ui": "*", "@acme/utils": "*", "jsonwebtoken": "^8.5.1", "axios": "^0.27.2"},
            "devDependencies": {name: f"^{cur}" for name, cur, _ in NPM_PACKAGES if cur != "-" and name not in ("webpack", "webpack-cli", "webpack-dev-server", "@babel/core", "jest")},
            "jest": None}, indent=2).replace('  "jest": null\n', '').replace(',\n}', '\n}') + "\n",
            f"`{app}`'s own manifest for its loaders and plugins.")
    bumped = " ".join(f"{n}@^{latest}" for n, _, latest in NPM_PACKAGES if latest != "-")
    install_lines = [f"npm WARN ERESOLVE overriding peer dependency" for _ in range(0)]
    for _ in range(rng.randint(28, 40)):
        dep = rng.choice(NPM_TRANSITIVE)
        install_lines += ["npm WARN ERESOLVE overriding peer dependency", f"npm WARN While resolving: {rng.choice([p for p, _, _ in NPM_PACKAGES])}@{npm_version(rng)}",
                          f"npm WARN Found: {dep}@{npm_version(rng)}", f"npm WARN node_modules/{dep}", f"npm WARN   dev {dep}@\"^{npm_version(rng)}\" from the root project",
                          f"npm WARN Could not resolve dependency:", f"npm WARN peer {dep}@\"^{npm_version(rng)}\" from {rng.choice(NPM_TRANSITIVE)}@{npm_version(rng)}"]
    install_lines += [f"npm WARN deprecated {d}@{npm_version(rng)}: {rng.choice(['This package is no longer supported.', 'Use your platform native atob() and btoa() methods instead', 'Glob versions prior to v9 are no longer supported', 'Rimraf versions prior to v4 are no longer supported'])}" for d in pick(rng, NPM_TRANSITIVE, 8)]
    install_lines += ["", f"added {rng.randint(140, 220)} packages, removed {rng.randint(180, 260)} packages, changed {rng.randint(300, 420)} packages, and audited {rng.randint(1700, 1900)} packages in {rng.randint(30, 80)}s",
                      "", f"{rng.randint(180, 240)} packages are looking for funding", "  run `npm fund` for details", "",
                      f"{rng.randint(2, 6)} moderate severity vulnerabilities", "", "To address all issues, run:", "  npm audit fix"]
    add("run_command", {"command": f"npm install -D -w apps/storefront -w apps/admin --include-workspace-root {bumped}"}, "\n".join(install_lines) + "\n",
        "Both configs use the same webpack-4-only options (`node.fs`, `namedModules`, terser `sourceMap`, `hmr` in the CSS extract loader, postcss `plugins`, sass `prependData`, array-form CopyPlugin, url-loader). Bumping all build dependencies in one install, then fixing the configs against the build output.")
    add("run_command", {"command": "git diff --stat"}, f" apps/admin/package.json      | {rng.randint(30, 44)} +++++-----\n apps/storefront/package.json | {rng.randint(30, 44)} +++++-----\n package-lock.json            | {rng.randint(9000, 14000)} ++++++++------\n package.json                 | 20 ++---\n 4 files changed, {rng.randint(6000, 9000)} insertions(+), {rng.randint(5000, 8000)} deletions(-)\n",
        "The install went through with peer-dependency overrides (old eslint plugins still declare webpack 4). What changed:")
    chunk_texts = ["The lockfile churn is huge. Skimming it for anything unexpected (a second copy of webpack, a downgrade):",
                   "Mostly transitive bumps of the webpack 5 dependency set (enhanced-resolve, watchpack, webpack-sources). Next chunk:",
                   "Still only version bumps with new integrity hashes. Next:",
                   "Babel's helpers all moved together to 7.24, good. Next chunk:",
                   "The jest 29 tree (jsdom 20, whatwg-url, tough-cookie) comes in here. Continuing:",
                   "Testing Library and jest-dom moved a major each; their peer ranges look consistent. Next:",
                   "ESLint 8 and its plugins, plus a new `@eslint/eslintrc`. Next:",
                   "css-loader 6 pulls postcss-modules-* 4.x; one copy each. Next:",
                   "The old `file-loader`/`url-loader` entries are removed here, as intended. Next:",
                   "No duplicate webpack and no downgrades so far. Last chunk I'll look at:"]
    for i, text in enumerate(chunk_texts):
        add("run_command", {"command": f"git diff package-lock.json | sed -n '{1 + i * 480},{(i + 1) * 480}p'"}, npm_lock_diff(rng, rng.randint(18, 22)), text)
    for pkg, why in [("eslint-webpack-plugin", "The install printed peer overrides; the first one is eslint-webpack-plugin. Why is it still resolved against webpack 4?"),
                     ("webpack-dev-server", "webpack-dev-server 4 was also in the override list:"),
                     ("@babel/core", "And the Babel core override, since babel-jest pins its own range:"),
                     ("postcss", "postcss appears twice in the tree; checking which versions and why:")]:
        lines = [f"{pkg}@{npm_version(rng)} dev", f"node_modules/{pkg}"]
        for _ in range(rng.randint(8, 16)):
            dep = rng.choice(NPM_TRANSITIVE + [p for p, _, _ in NPM_PACKAGES])
            lines += [f"  {rng.choice(['dev', 'peer', 'peerOptional'])} {pkg}@\"^{npm_version(rng)}\" from {dep}@{npm_version(rng)}",
                      f"  node_modules/{dep}", f"    dev {dep}@\"^{npm_version(rng)}\" from {rng.choice(['the root project', '@acme/storefront@3.8.0', '@acme/admin@3.8.0'])}"]
        add("run_command", {"command": f"npm explain {pkg}"}, "\n".join(lines) + "\n", why)
    for plugin, major in [("webpack", "5.0.0"), ("mini-css-extract-plugin", "2.0.0"), ("postcss-loader", "5.0.0"), ("sass-loader", "11.0.0"),
                          ("copy-webpack-plugin", "7.0.0"), ("terser-webpack-plugin", "5.0.0"), ("html-webpack-plugin", "5.0.0"), ("jest", "28.0.0")]:
        add("run_command", {"command": f"sed -n '/^## \\[\\?{major}/,/^## \\[\\?{major.split('.')[0]}\\.[1-9]/p' node_modules/{plugin}/CHANGELOG.md"},
            changelog(rng, plugin, major),
            f"Before building, the breaking changes of `{plugin}` {major.split('.')[0]}, from its changelog, so I recognise the errors when they come." if plugin == "webpack" else f"`{plugin}` {major} breaking changes:")
    for path, body in s4_sources(rng):
        add("read_file", {"path": path}, body, f"Which app code pulls node core modules? `{path}`:" if "auth" in path else f"And `{path}`:")
    # -- per app: fix the config against the build output -----------------
    polyfills = ["crypto|../../node_modules/jsonwebtoken/lib/verify.js", "stream|../../node_modules/jws/lib/data-stream.js",
                 "buffer|../../node_modules/safe-buffer/index.js", "path|../../packages/utils/src/paths.js",
                 "crypto|../../node_modules/jwa/index.js", "stream|../../node_modules/readable-stream/lib/_stream_readable.js",
                 "os|../../node_modules/supports-color/index.js", "util|../../node_modules/jws/lib/sign-stream.js"]
    for app in apps:
        cfg = f"apps/{app}/webpack.config.js"
        order = WEBPACK_ERRORS[:] if app == "storefront" else [e for e in WEBPACK_ERRORS if e[0] != "polyfills"]
        for k, err in enumerate(order):
            sites = pick(rng, polyfills, rng.randint(6, 8)) if err[0] == "polyfills" else []
            done = order[k - 1] if k else None
            add("run_command", {"command": f"npm run build -w apps/{app} 2>&1"}, webpack_build(rng, app, err, sites, 0),
                f"Building `{app}` with webpack 5; webpack 5 reports configuration errors one at a time, so I expect a sequence of these." if k == 0 else
                f"That takes care of the {done[0].replace('_', ' ')} problem ({done[4].split(';')[0].rstrip('.')}). " + rng.choice([
                    f"Rebuilding `{app}` to see what webpack 5 complains about next.",
                    f"The next build of `{app}` will show whether anything else in the config is webpack-4-only.",
                    f"Building `{app}` again; {len(order) - k} of the incompatibilities I noted from the changelogs may still be ahead."]))
            if err[0] == "polyfills":
                add("run_command", {"command": "npm install -D -w apps/storefront crypto-browserify stream-browserify buffer process path-browserify os-browserify util"},
                    f"\nadded {rng.randint(18, 30)} packages, and audited {rng.randint(1800, 1950)} packages in {rng.randint(6, 20)}s\n\n{rng.randint(180, 240)} packages are looking for funding\n  run `npm fund` for details\n\nfound 0 vulnerabilities\n",
                    err[4] + " Installing the browser polyfills first.")
                add("edit_file", {"path": cfg, "old_string": "    alias: { '@': path.resolve(__dirname, 'src') },\n  },\n",
                                  "new_string": "    alias: { '@': path.resolve(__dirname, 'src') },\n    fallback: {\n      crypto: require.resolve('crypto-browserify'),\n      stream: require.resolve('stream-browserify'),\n      buffer: require.resolve('buffer/'),\n      path: require.resolve('path-browserify'),\n      os: require.resolve('os-browserify/browser'),\n      util: require.resolve('util/'),\n      fs: false,\n    },\n  },\n"},
                    f"Applied 1 edit to {cfg}", "Then `resolve.fallback`: polyfills for crypto, stream, buffer, path, os and util; `fs: false`.")
                add("edit_file", {"path": cfg, "old_string": "    new webpack.DefinePlugin(", "new_string": "    new webpack.ProvidePlugin({ process: 'process/browser', Buffer: ['buffer', 'Buffer'] }),\n    new webpack.DefinePlugin("},
                    f"Applied 1 edit to {cfg}", "And `ProvidePlugin` for the `process` and `Buffer` globals that the polyfilled modules expect.")
                continue
            add("edit_file", {"path": cfg, "old_string": err[2], "new_string": err[3]}, f"Applied 1 edit to {cfg}", err[4])
        add("run_command", {"command": f"npm run build -w apps/{app} 2>&1"}, webpack_build(rng, app, None, [], 1),
            f"That was the last incompatibility I know of in `{app}`; building once more.")
        add("run_command", {"command": f"npx webpack --mode production --config apps/{app}/webpack.config.js --stats detailed 2>&1 | head -300"},
            "\n".join([f"asset {c}.{hexid(rng, 20)}.{ext} {rng.uniform(0.5, 900):.1f} KiB [emitted] [immutable] [minimized] (name: {c}) (id hint: {rng.choice(['vendors', 'default', 'styles'])}) 1 related asset" for c in ["main", "vendors", "runtime", "checkout", "account", "product", "styles"] for ext in ("js", "css") if rng.random() < 0.8]
                      + [f"Entrypoint main {rng.uniform(600, 1200):.0f} KiB (2.1 MiB) = runtime.{hexid(rng, 20)}.js vendors.{hexid(rng, 20)}.js main.{hexid(rng, 20)}.js"]
                      + [f"chunk (runtime: runtime) {c}.{hexid(rng, 20)}.js ({c}) {rng.uniform(1, 900):.1f} KiB [initial] [rendered] split chunk (cache group: defaultVendors)" for c in ["vendors", "checkout", "account", "product"]]
                      + webpack_noise(rng, app, rng.randint(60, 90))
                      + [f"cacheable modules {rng.uniform(2, 5):.2f} MiB", f"webpack 5.91.0 compiled with 1 warning in {rng.randint(14000, 52000)} ms"]) + "\n",
            f"`{app}` builds (one size warning for the vendors chunk, as before the upgrade). The detailed stats, to check chunk splitting did not change shape:")
        add("run_command", {"command": f"node scripts/size-report.js apps/{app}/dist --compare apps/{app}/dist-webpack4"},
            "chunk            webpack4    webpack5     diff\n" + "\n".join(f"{c:<16} {rng.randint(20, 900):>6} KiB  {rng.randint(20, 880):>6} KiB  {rng.uniform(-12, 4):+.1f}%" for c in ["main", "vendors", "runtime", "checkout", "account", "product", "styles"]) + "\n",
            f"Same chunks as before (runtime, vendors, one per route). Comparing bundle sizes against the webpack 4 build kept in `dist-webpack4`:")
        suites = [f"{d}/{n}.test.jsx" for d, n in [(rng.choice(["components", "hooks", "pages", "utils"]), rng.choice(["Price", "Cart", "useDebounce", "debounce", "Checkout", "Header", "format", "useAuth", "ProductCard", "Search", "Filters", "Pagination"])) for _ in range(rng.randint(18, 26))]]
        suites = list(dict.fromkeys(suites))
        if not any("debounce" in x.lower() for x in suites):
            suites.append("hooks/useDebounce.test.jsx")
        jest_cfg = f"apps/{app}/jest.config.js"
        add("read_file", {"path": jest_cfg}, "module.exports = {\n  testEnvironment: 'jsdom',\n  testURL: 'http://localhost/',\n  timers: 'legacy',\n  setupFilesAfterEach: ['<rootDir>/test/setup.js'],\n  moduleNameMapper: { '\\\\.(css|scss)$': 'identity-obj-proxy', '^@/(.*)$': '<rootDir>/src/$1' },\n  snapshotSerializers: ['@emotion/jest/serializer'],\n  transform: { '^.+\\\\.jsx?$': 'babel-jest' },\n};\n",
            f"Sizes are within a few percent, mostly smaller. Now the tests of `{app}`: Jest went from 26 to 29, so the config first.")
        for k, err in enumerate(JEST_ERRORS):
            add("run_command", {"command": f"npm test -w apps/{app} 2>&1 | tail -120"}, jest_output(rng, app, err, suites),
                f"Running `{app}`'s tests on Jest 29." if k == 0 else
                f"Config adjusted for the {JEST_ERRORS[k - 1][0]} change ({JEST_ERRORS[k - 1][4].split(';')[0].rstrip('.')}). Tests of `{app}` again.")
            if err[0] == "jsdom" and app == "storefront":
                add("run_command", {"command": "npm install -D -w apps/storefront -w apps/admin jest-environment-jsdom@^29.7.0"},
                    f"\nadded {rng.randint(30, 48)} packages, and audited {rng.randint(1900, 2000)} packages in {rng.randint(8, 20)}s\n\nfound 0 vulnerabilities\n",
                    err[4] + " Installing it for both apps.")
            add("edit_file", {"path": jest_cfg, "old_string": err[2], "new_string": err[3]}, f"Applied 1 edit to {jest_cfg}", err[4])
        add("run_command", {"command": f"npm test -w apps/{app} 2>&1 | tail -120"}, jest_output(rng, app, None, suites),
            f"Last Jest config change for `{app}`; full run.")
    for pkg in packages:
        add("run_command", {"command": f"npm test -w packages/{pkg} 2>&1 | tail -80"},
            jest_output(rng, pkg, None, [f"{rng.choice(['tokens', 'Button', 'Modal', 'format', 'paths', 'money', 'dates'])}/{rng.choice(['index', 'render', 'edge'])}{i}.test.js" for i in range(rng.randint(8, 14))]),
            f"The shared package `{pkg}` has no build step, only tests; running them on the new Jest.")
    for app in apps:
        diff = [f"diff --git a/apps/{app}/webpack.config.js b/apps/{app}/webpack.config.js", f"index {hexid(rng, 7)}..{hexid(rng, 7)} 100644",
                f"--- a/apps/{app}/webpack.config.js", f"+++ b/apps/{app}/webpack.config.js"]
        for err in WEBPACK_ERRORS:
            if err[2] is None or (app == "admin" and err[0] == "polyfills"):
                continue
            diff.append(f"@@ -{rng.randint(10, 80)},{err[2].count(chr(10)) + 2} +{rng.randint(10, 80)},{err[3].count(chr(10)) + 2} @@ module.exports = {{")
            diff += ["-" + l for l in err[2].rstrip("\n").split("\n")] + ["+" + l for l in err[3].rstrip("\n").split("\n")]
        add("run_command", {"command": f"git diff apps/{app}/webpack.config.js"}, "\n".join(diff) + "\n",
            f"Reviewing the complete config change of `{app}` in one diff before calling it done.")
        dev = [f"<i> [webpack-dev-middleware] wait until bundle finished: /{app}/"] + webpack_noise(rng, app, rng.randint(50, 80)) + [f"webpack 5.91.0 compiled successfully in {rng.randint(4000, 12000)} ms"]
        add("run_command", {"command": f"timeout 60 npx webpack serve --mode development --config apps/{app}/webpack.config.js --port 0 2>&1 | tail -120"},
            "<i> [webpack-dev-server] Project is running at:\n<i> [webpack-dev-server] Loopback: http://localhost:41733/\n" + "\n".join(dev) + "\n",
            f"The dev server is on v4 with a different config surface; making sure `{app}` still starts in development mode.")
    lint = [f"> storefront-monorepo@3.8.0 lint", "> eslint . --ext .js,.jsx", ""]
    for _ in range(rng.randint(10, 16)):
        f = f"/work/storefront/apps/{rng.choice(apps)}/src/{rng.choice(['components', 'pages', 'hooks', 'utils'])}/{rng.choice(['Cart', 'Price', 'Search', 'Header', 'format', 'useAuth'])}.{rng.choice(['jsx', 'js'])}"
        lint.append(f)
        for _ in range(rng.randint(1, 6)):
            lint.append(f"  {rng.randint(1, 240)}:{rng.randint(1, 60)}  {rng.choice(['warning', 'warning', 'error'])}  {rng.choice(['React Hook useEffect has a missing dependency', 'Unexpected console statement', 'is assigned a value but never used', 'Prefer default export', 'Unsafe optional chaining'])}  {rng.choice(['react-hooks/exhaustive-deps', 'no-console', 'no-unused-vars', 'import/prefer-default-export', 'no-unsafe-optional-chaining'])}")
        lint.append("")
    lint.append(f"✖ {rng.randint(40, 80)} problems (0 errors, {rng.randint(40, 80)} warnings)")
    add("run_command", {"command": "npm run lint 2>&1 | tail -150"}, "\n".join(lint) + "\n",
        "ESLint 8 came with the upgrade; the lint job must not regress to errors.")
    add("run_command", {"command": "npx update-browserslist-db@latest"}, f"Latest version:     1.0.{rng.randint(1500, 1700)}\nInstalled version:  1.0.{rng.randint(1300, 1499)}\nRemoving old caniuse-lite from lock file\nInstalling new caniuse-lite version\n$ npm install caniuse-lite\nCleaning package.json dependencies from caniuse-lite\ncaniuse-lite has been successfully updated\n\nTarget browser changes:\n- and_chr {rng.randint(110, 118)}\n+ and_chr {rng.randint(119, 124)}\n- chrome {rng.randint(110, 118)}\n+ chrome {rng.randint(119, 124)}\n- safari 15.6\n+ safari 17.4\n",
        "Lint has only the warnings it had before (no new errors). Babel and autoprefixer warned about an old caniuse-lite during the builds; updating the browserslist database.")
    add("run_command", {"command": "npm run build && npm test 2>&1 | grep -E '^(Test Suites|Tests|>)'"},
        "> storefront-monorepo@3.8.0 build\n> npm run build --workspaces --if-present\n\n> @acme/storefront@3.8.0 build\n> @acme/admin@3.8.0 build\n\n> storefront-monorepo@3.8.0 test\n" + "\n".join(f"Test Suites: {n} passed, {n} total\nTests:       {t} passed, {t} total" for n, t in [(rng.randint(10, 26), rng.randint(80, 200)) for _ in range(4)]) + "\n",
        "Every workspace passes on its own. The root scripts together, as CI runs them.")
    add("run_command", {"command": "npm audit --omit=dev"}, "found 0 vulnerabilities\n", "Green. A last look at the production dependency audit.")
    for tool, args, output, text in plan:
        s.step(text, tool, args, output=output)
    s.answer("""Webpack 5 upgrade done; `npm run build` and `npm test` pass in all workspaces.

- Bumped the build chain: webpack 5.91, webpack-cli 5, webpack-dev-server 4, babel-loader 9, html-webpack-plugin 5, mini-css-extract-plugin 2, css-loader 6, postcss-loader 7, sass-loader 13, terser-webpack-plugin 5, copy-webpack-plugin 11, Babel 7.24, Jest 29 (+ `jest-environment-jsdom`); removed url-loader/file-loader.
- Config changes in both apps: `node.fs` → `resolve.fallback` (browser polyfills for crypto, stream, buffer, path, os, util; `fs: false`) plus `ProvidePlugin` for `process`/`Buffer` (storefront); `namedModules` → `moduleIds: 'named'`; terser `sourceMap` removed; CSS extract `hmr` removed; postcss `plugins` → `postcssOptions`; sass `prependData` → `additionalData`; CopyPlugin `{ patterns }`; url-loader → asset modules (`type: 'asset'`, 8 KiB inline limit).
- Jest 29: `testEnvironment: 'jest-environment-jsdom'`, `testURL` → `testEnvironmentOptions.url`, `timers: 'legacy'` → `fakeTimers: { legacyFakeTimers: true }`, and `snapshotFormat` pinned to the old format so existing snapshots stay valid (re-recording them can be a follow-up).
- Bundle sizes are within a few percent of the webpack 4 build; 0 production vulnerabilities.""")
    s.summary("""Summary of the upgrade so far:
- Root and both apps bumped to webpack 5.91 and the matching loader/plugin majors, Babel 7.24, Jest 29 (npm install with peer overrides; lockfile diff checked: only version bumps, no duplicate webpack).
- Webpack config fixes applied per app, one build error at a time: node.fs → resolve.fallback, namedModules → moduleIds 'named', terser sourceMap removed, polyfills (crypto/stream/buffer/path/os/util + ProvidePlugin) for storefront, mini-css-extract hmr removed, postcss plugins → postcssOptions, sass prependData → additionalData, CopyPlugin patterns, url-loader → asset modules.
- Jest fixes: jest-environment-jsdom installed and named, testURL → testEnvironmentOptions.url, legacy fake timers, snapshotFormat pinned.
Remaining: finish the current app, run the shared packages' tests, run the root build/test, audit.""", reusable=True)
    head = {
        "name": s.name,
        "description": (
            f"A dependency upgrade (webpack 4 → 5 with its loaders and plugins, Babel, Jest 26 → 29) in an npm-workspaces "
            f"monorepo: {s.main_steps} model decisions, almost all of them answered by mid-size, token-dense outputs "
            "(npm trees, lockfile diffs full of sha512 integrity hashes, webpack and Jest output, configs), with short "
            "assistant turns that fix one build error at a time. This is the observation-heavy shape where masking old tool "
            "results is nearly all that matters: under `roku` only Layer 0 runs and keeps every request small; `masking` "
            "keeps ten results whole; `opencode` cannot prune in a one-prompt session (it protects the last two user turns) "
            "and, like `codex`, only summarizes near the window; `none` runs out of window. The uncompacted history passes "
            "150K tokens."
        ),
        "model": "gpt-4.1",
        "context_window": 128000,
        "system": "You are a frontend build engineer. Upgrade dependencies carefully: read the configs, bump versions, then fix what the build and the tests report, one problem at a time, with minimal config changes. Finish with a summary of what changed.",
        "task": "Upgrade the storefront monorepo (npm workspaces: apps/storefront, apps/admin, packages/ui, packages/utils) from webpack 4 to webpack 5, with the loaders and plugins that go with it, Babel 7.24 and Jest 29. `npm run build` and `npm test` must pass in every workspace.",
    }
    return s, {"head": head, "final_contains": ["webpack 5", "resolve.fallback", "jest-environment-jsdom"]}
