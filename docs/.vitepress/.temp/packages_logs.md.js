import { ssrRenderAttrs } from "vue/server-renderer";
import { useSSRContext } from "vue";
import { _ as _export_sfc } from "./plugin-vue_export-helper.1tPrXgE0.js";
const __pageData = JSON.parse('{"title":"@keel/logs","description":"","frontmatter":{},"headers":[],"relativePath":"packages/logs.md","filePath":"packages/logs.md"}');
const _sfc_main = { name: "packages/logs.md" };
function _sfc_ssrRender(_ctx, _push, _parent, _attrs, $props, $setup, $data, $options) {
  _push(`<div${ssrRenderAttrs(_attrs)}><div><h1 id="keel-logs" tabindex="-1">@keel/logs <a class="header-anchor" href="#keel-logs" aria-label="Permalink to &quot;@keel/logs&quot;">​</a></h1><p>Structured JSON logs of keel runs: one line per run event, through pino.</p><p><strong>Rests on</strong> <code>pino</code>, the fast JSON logger of Node, whose lines log shippers already understand; and <code>@keel/telemetry</code> for the shape of trace ids. It takes your pino logger (keel logs through a child bound to <code>{ component: &#39;keel&#39; }</code>), or writes JSON lines to standard output.</p><div class="language-ts vp-adaptive-theme"><button title="Copy Code" class="copy"></button><span class="lang">ts</span><pre class="shiki shiki-themes github-light github-dark vp-code" tabindex="0" v-pre=""><code><span class="line"><span style="--shiki-light:#D73A49;--shiki-dark:#F97583;">import</span><span style="--shiki-light:#24292E;--shiki-dark:#E1E4E8;"> { keelLogs } </span><span style="--shiki-light:#D73A49;--shiki-dark:#F97583;">from</span><span style="--shiki-light:#032F62;--shiki-dark:#9ECBFF;"> &#39;@keel/logs&#39;</span><span style="--shiki-light:#24292E;--shiki-dark:#E1E4E8;">;</span></span>
<span class="line"><span style="--shiki-light:#D73A49;--shiki-dark:#F97583;">import</span><span style="--shiki-light:#24292E;--shiki-dark:#E1E4E8;"> { keelTracing } </span><span style="--shiki-light:#D73A49;--shiki-dark:#F97583;">from</span><span style="--shiki-light:#032F62;--shiki-dark:#9ECBFF;"> &#39;@keel/otel&#39;</span><span style="--shiki-light:#24292E;--shiki-dark:#E1E4E8;">;</span></span>
<span class="line"></span>
<span class="line"><span style="--shiki-light:#D73A49;--shiki-dark:#F97583;">const</span><span style="--shiki-light:#005CC5;--shiki-dark:#79B8FF;"> tracing</span><span style="--shiki-light:#D73A49;--shiki-dark:#F97583;"> =</span><span style="--shiki-light:#6F42C1;--shiki-dark:#B392F0;"> keelTracing</span><span style="--shiki-light:#24292E;--shiki-dark:#E1E4E8;">();</span></span>
<span class="line"><span style="--shiki-light:#24292E;--shiki-dark:#E1E4E8;">tracing.</span><span style="--shiki-light:#6F42C1;--shiki-dark:#B392F0;">observe</span><span style="--shiki-light:#24292E;--shiki-dark:#E1E4E8;">(assistant);                                   </span><span style="--shiki-light:#6A737D;--shiki-dark:#6A737D;">// first: the logs ask it for each event&#39;s span</span></span>
<span class="line"><span style="--shiki-light:#6F42C1;--shiki-dark:#B392F0;">keelLogs</span><span style="--shiki-light:#24292E;--shiki-dark:#E1E4E8;">({ logger, traceIdsOf: tracing.traceIdsOf }).</span><span style="--shiki-light:#6F42C1;--shiki-dark:#B392F0;">observe</span><span style="--shiki-light:#24292E;--shiki-dark:#E1E4E8;">(assistant);</span></span></code></pre></div><p>Each line carries <code>event</code> (the event&#39;s type), <code>runId</code>, <code>step</code> when the event has one, <code>trace_id</code>, <code>span_id</code> and <code>trace_flags</code> of the event&#39;s span when tracing is on, and the event&#39;s fields. Levels: <code>debug</code> for starts of calls, steps and saved checkpoints; <code>info</code> for what went well; <code>warn</code> for retries, fallbacks, an opening breaker, failed calls, tripped guardrails and interrupted or cancelled runs; <code>error</code> for failed runs and checkpoints that could not be saved. Every string of a line goes through core&#39;s <code>redactSecrets</code> and credential-named fields are dropped (pass your keys&#39; values as <code>secrets</code> to remove keys of shapes no pattern knows, such as <code>gsk_...</code> or 32 hex digits); answer text is never logged, and correction messages only with <code>recordContent: true</code>. <code>write(level, fields, message)</code> logs a line of your own with the same redaction (the CLI logs a run&#39;s result that way).</p></div></div>`);
}
const _sfc_setup = _sfc_main.setup;
_sfc_main.setup = (props, ctx) => {
  const ssrContext = useSSRContext();
  (ssrContext.modules || (ssrContext.modules = /* @__PURE__ */ new Set())).add("packages/logs.md");
  return _sfc_setup ? _sfc_setup(props, ctx) : void 0;
};
const logs = /* @__PURE__ */ _export_sfc(_sfc_main, [["ssrRender", _sfc_ssrRender]]);
export {
  __pageData,
  logs as default
};
