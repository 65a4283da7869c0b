import { ssrRenderAttrs } from "vue/server-renderer";
import { useSSRContext } from "vue";
import { _ as _export_sfc } from "./plugin-vue_export-helper.1tPrXgE0.js";
const __pageData = JSON.parse('{"title":"The command line","description":"","frontmatter":{},"headers":[],"relativePath":"reference/cli.md","filePath":"reference/cli.md"}');
const _sfc_main = { name: "reference/cli.md" };
function _sfc_ssrRender(_ctx, _push, _parent, _attrs, $props, $setup, $data, $options) {
  _push(`<div${ssrRenderAttrs(_attrs)}><h1 id="the-command-line" tabindex="-1">The command line <a class="header-anchor" href="#the-command-line" aria-label="Permalink to &quot;The command line&quot;">​</a></h1><p>Generated from the CLI&#39;s command table (<code>packages/cli/src/commands/command-table.ts</code>): what <code>keel &lt;command&gt; --help</code> prints. Every command refuses the options it does not take; <code>keel --version</code> prints the version.</p><h2 id="keel-run" tabindex="-1">keel run <a class="header-anchor" href="#keel-run" aria-label="Permalink to &quot;keel run&quot;">​</a></h2><p>run an agent file durably, showing live what happens, then the report.</p><div class="language-text vp-adaptive-theme"><button title="Copy Code" class="copy"></button><span class="lang">text</span><pre class="shiki shiki-themes github-light github-dark vp-code" tabindex="0"><code><span class="line"><span>keel run: run an agent file durably, showing live what happens, then the report</span></span>
<span class="line"><span></span></span>
<span class="line"><span>usage: keel run &lt;agent.yaml&gt; &quot;&lt;task&gt;&quot; [--faults SPEC] [--seed N] [--json] [--store URL|PATH]</span></span>
<span class="line"><span>                [--allow-host HOST]... [--allow-programs] [--allow-env NAME]... [--allow-key-host HOST]...</span></span>
<span class="line"><span>                [--otlp URL] [--metrics-port N] [--log json]</span></span>
<span class="line"><span></span></span>
<span class="line"><span>options:</span></span>
<span class="line"><span>  --faults SPEC   fault schedule of the simulated provider: a preset (none, demo, flaky, chaos) or entries such as</span></span>
<span class="line"><span>                  &quot;rate_limit=0.2,server_error=0.1,reset=0.05&quot; (default: none)</span></span>
<span class="line"><span>  --seed N        seed of the fault schedule (default: 1)</span></span>
<span class="line"><span>  --json          print the result as JSON</span></span>
<span class="line"><span>  --store URL|PATH  postgres://... or a SQLite file (default: ./.keel/keel.db)</span></span>
<span class="line"><span>  --allow-key-host HOST</span></span>
<span class="line"><span>                  let an API key go to HOST (name, or name:port) when the agent file&#39;s baseUrl points there; keys</span></span>
<span class="line"><span>                  go only to the provider&#39;s own host over https otherwise; implies --allow-host HOST</span></span>
<span class="line"><span>  --allow-host HOST</span></span>
<span class="line"><span>                  let the conversation and tool requests go to HOST (name, name:port, or an address range such as</span></span>
<span class="line"><span>                  10.1.0.0/16): a model&#39;s baseUrl, an http: tool&#39;s url or allow: entry, an mcp: url; without it they</span></span>
<span class="line"><span>                  go only to the provider&#39;s own host over https and to this machine (see the README&#39;s trust model)</span></span>
<span class="line"><span>  --allow-programs</span></span>
<span class="line"><span>                  let the agent file start programs: command: tools and mcp: servers run by keel</span></span>
<span class="line"><span>  --allow-env NAME</span></span>
<span class="line"><span>                  let those programs get keel&#39;s NAME, a variable whose name looks like a secret (HOME, LANG or</span></span>
<span class="line"><span>                  LOG_LEVEL pass without it)</span></span>
<span class="line"><span>  --otlp URL      export traces and metrics over OTLP/HTTP to a receiver, such as http://127.0.0.1:4318, as</span></span>
<span class="line"><span>                  service.name OTEL_SERVICE_NAME (default: keel) with OTEL_RESOURCE_ATTRIBUTES; the last export,</span></span>
<span class="line"><span>                  as the command ends, waits at most 2 s for the receiver</span></span>
<span class="line"><span>  --metrics-port N  serve Prometheus metrics at http://127.0.0.1:N/metrics while the run lives, and no longer</span></span>
<span class="line"><span>  --log json      print JSON log lines (one per event, then the result) in place of the live view</span></span>
<span class="line"><span></span></span>
<span class="line"><span>exit codes: 0 completed, 1 failed, 2 invalid input, 3 interrupted (resumable: keel resume &lt;run-id&gt;), 130 cancelled</span></span></code></pre></div><h2 id="keel-chat" tabindex="-1">keel chat <a class="header-anchor" href="#keel-chat" aria-label="Permalink to &quot;keel chat&quot;">​</a></h2><p>talk with an agent file, one turn per run, kept in a session.</p><div class="language-text vp-adaptive-theme"><button title="Copy Code" class="copy"></button><span class="lang">text</span><pre class="shiki shiki-themes github-light github-dark vp-code" tabindex="0"><code><span class="line"><span>usage: keel chat &lt;agent.yaml&gt; [--session ID] [--json] [--store URL|PATH] [--faults SPEC] [--seed N]</span></span>
<span class="line"><span>                 [--allow-host HOST]... [--allow-programs] [--allow-env NAME]... [--allow-key-host HOST]...</span></span>
<span class="line"><span></span></span>
<span class="line"><span>An interactive chat with the agent of &lt;agent.yaml&gt;, kept in a session of the run store: the answer streams as it is</span></span>
<span class="line"><span>written, retries, fallbacks and tool calls show inline (and, while the model sends nothing, how long it has been</span></span>
<span class="line"><span>waited for), and a tool call that needs approval is asked about (y/n, with a reason for a refusal). Every answered</span></span>
<span class="line"><span>turn is saved; come back to the conversation with --session.</span></span>
<span class="line"><span></span></span>
<span class="line"><span>options:</span></span>
<span class="line"><span>  --session ID    the session to continue (or start): 1 to 128 letters, digits and . _ : @ - (default: a new one,</span></span>
<span class="line"><span>                  printed at the start)</span></span>
<span class="line"><span>  --json          one JSON object per line (events, answers, decisions) for machines; read lines are messages,</span></span>
<span class="line"><span>                  and &quot;y&quot; or &quot;n [reason]&quot; answer the decisions a run waits for</span></span>
<span class="line"><span>  --store         postgres://... or a SQLite file (default: ./.keel/keel.db)</span></span>
<span class="line"><span>  --faults SPEC   fault schedule of the simulated provider (see keel --help)</span></span>
<span class="line"><span>  --seed N        seed of the fault schedule (default: 1)</span></span>
<span class="line"><span>  --allow-key-host HOST</span></span>
<span class="line"><span>                  a host other than the provider&#39;s own that may receive the agent&#39;s API key (see keel --help)</span></span>
<span class="line"><span>  --allow-host HOST</span></span>
<span class="line"><span>                  let the conversation and tool requests go to HOST (name, name:port, or an address range such as</span></span>
<span class="line"><span>                  10.1.0.0/16): a model&#39;s baseUrl, an http: tool&#39;s url or allow: entry, an mcp: url; without it they</span></span>
<span class="line"><span>                  go only to the provider&#39;s own host over https and to this machine (see the README&#39;s trust model)</span></span>
<span class="line"><span>  --allow-programs</span></span>
<span class="line"><span>                  let the agent file start programs: command: tools and mcp: servers run by keel</span></span>
<span class="line"><span>  --allow-env NAME</span></span>
<span class="line"><span>                  let those programs get keel&#39;s NAME, a variable whose name looks like a secret (HOME, LANG or</span></span>
<span class="line"><span>                  LOG_LEVEL pass without it)</span></span>
<span class="line"><span></span></span>
<span class="line"><span>keys: Ctrl-C stops the answer being written (the session keeps what completed); Ctrl-C or Ctrl-D at the prompt, or</span></span>
<span class="line"><span>/exit, leaves.</span></span></code></pre></div><h2 id="keel-sessions-list" tabindex="-1">keel sessions list <a class="header-anchor" href="#keel-sessions-list" aria-label="Permalink to &quot;keel sessions list&quot;">​</a></h2><p>list the sessions of a store, most recently updated first.</p><div class="language-text vp-adaptive-theme"><button title="Copy Code" class="copy"></button><span class="lang">text</span><pre class="shiki shiki-themes github-light github-dark vp-code" tabindex="0"><code><span class="line"><span>keel sessions list: the sessions of a store, most recently updated first</span></span>
<span class="line"><span></span></span>
<span class="line"><span>usage: keel sessions list [--limit N] [--json] [--store URL|PATH]</span></span>
<span class="line"><span></span></span>
<span class="line"><span>Sessions are conversations kept across runs (keel chat, or agent.run(input, { sessionId })): one turn per completed run.</span></span>
<span class="line"><span></span></span>
<span class="line"><span>options:</span></span>
<span class="line"><span>  --limit N       the most sessions shown (default: 20)</span></span>
<span class="line"><span>  --json          print JSON</span></span>
<span class="line"><span>  --store URL|PATH  postgres://... or a SQLite file (default: ./.keel/keel.db)</span></span></code></pre></div><h2 id="keel-sessions-show" tabindex="-1">keel sessions show <a class="header-anchor" href="#keel-sessions-show" aria-label="Permalink to &quot;keel sessions show&quot;">​</a></h2><p>show a session&#39;s turns.</p><div class="language-text vp-adaptive-theme"><button title="Copy Code" class="copy"></button><span class="lang">text</span><pre class="shiki shiki-themes github-light github-dark vp-code" tabindex="0"><code><span class="line"><span>keel sessions show: a session&#39;s turns, what was said and which tools were called</span></span>
<span class="line"><span></span></span>
<span class="line"><span>usage: keel sessions show &lt;session-id&gt; [--json] [--store URL|PATH]</span></span>
<span class="line"><span></span></span>
<span class="line"><span>options:</span></span>
<span class="line"><span>  --json          print JSON</span></span>
<span class="line"><span>  --store URL|PATH  postgres://... or a SQLite file (default: ./.keel/keel.db)</span></span></code></pre></div><h2 id="keel-sessions-delete" tabindex="-1">keel sessions delete <a class="header-anchor" href="#keel-sessions-delete" aria-label="Permalink to &quot;keel sessions delete&quot;">​</a></h2><p>delete a session (its runs stay in the store).</p><div class="language-text vp-adaptive-theme"><button title="Copy Code" class="copy"></button><span class="lang">text</span><pre class="shiki shiki-themes github-light github-dark vp-code" tabindex="0"><code><span class="line"><span>keel sessions delete: delete a session; its runs stay in the store</span></span>
<span class="line"><span></span></span>
<span class="line"><span>usage: keel sessions delete &lt;session-id&gt; [--force] [--json] [--store URL|PATH]</span></span>
<span class="line"><span></span></span>
<span class="line"><span>options:</span></span>
<span class="line"><span>  --force         even while a run holds the session (its turns are then never saved)</span></span>
<span class="line"><span>  --json          print JSON</span></span>
<span class="line"><span>  --store URL|PATH  postgres://... or a SQLite file (default: ./.keel/keel.db)</span></span></code></pre></div><h2 id="keel-runs-list" tabindex="-1">keel runs list <a class="header-anchor" href="#keel-runs-list" aria-label="Permalink to &quot;keel runs list&quot;">​</a></h2><p>list the runs of a store, newest first.</p><div class="language-text vp-adaptive-theme"><button title="Copy Code" class="copy"></button><span class="lang">text</span><pre class="shiki shiki-themes github-light github-dark vp-code" tabindex="0"><code><span class="line"><span>keel runs list: the runs of a store, newest first</span></span>
<span class="line"><span></span></span>
<span class="line"><span>usage: keel runs list [--status STATUS] [--limit N] [--json] [--store URL|PATH]</span></span>
<span class="line"><span></span></span>
<span class="line"><span>options:</span></span>
<span class="line"><span>  --status STATUS only runs in this status: queued, running, completed, failed, interrupted, cancelled</span></span>
<span class="line"><span>  --limit N       the most runs shown (default: 20)</span></span>
<span class="line"><span>  --json          print the result as JSON</span></span>
<span class="line"><span>  --store URL|PATH  postgres://... or a SQLite file (default: ./.keel/keel.db)</span></span></code></pre></div><h2 id="keel-runs-show" tabindex="-1">keel runs show <a class="header-anchor" href="#keel-runs-show" aria-label="Permalink to &quot;keel runs show&quot;">​</a></h2><p>show a run: its report, pending decisions and what to do next.</p><div class="language-text vp-adaptive-theme"><button title="Copy Code" class="copy"></button><span class="lang">text</span><pre class="shiki shiki-themes github-light github-dark vp-code" tabindex="0"><code><span class="line"><span>keel runs show: a run&#39;s report, its pending decisions and what to do next</span></span>
<span class="line"><span></span></span>
<span class="line"><span>usage: keel runs show &lt;run-id&gt; [--json] [--store URL|PATH]</span></span>
<span class="line"><span></span></span>
<span class="line"><span>options:</span></span>
<span class="line"><span>  --json          print the result as JSON</span></span>
<span class="line"><span>  --store URL|PATH  postgres://... or a SQLite file (default: ./.keel/keel.db)</span></span></code></pre></div><h2 id="keel-resume" tabindex="-1">keel resume <a class="header-anchor" href="#keel-resume" aria-label="Permalink to &quot;keel resume&quot;">​</a></h2><p>resume an interrupted run, answering the calls it waits on.</p><div class="language-text vp-adaptive-theme"><button title="Copy Code" class="copy"></button><span class="lang">text</span><pre class="shiki shiki-themes github-light github-dark vp-code" tabindex="0"><code><span class="line"><span>keel resume: resume an interrupted run from its last checkpoint, answering the calls it waits on</span></span>
<span class="line"><span></span></span>
<span class="line"><span>usage: keel resume &lt;run-id&gt; [--approve KEY]... [--reject KEY[=REASON]]... [--execute KEY]... [--abandon KEY]...</span></span>
<span class="line"><span>                   [--wait] [--agent &lt;agent.yaml&gt;] [--json] [--store URL|PATH] [--redis URL]</span></span>
<span class="line"><span>                   [--allow-host HOST]... [--allow-programs] [--allow-env NAME]... [--allow-key-host HOST]...</span></span>
<span class="line"><span>                   [--otlp URL] [--metrics-port N] [--log json]</span></span>
<span class="line"><span></span></span>
<span class="line"><span>options:</span></span>
<span class="line"><span>  --approve KEY   run a call that waits for approval (KEY is its idempotency key, printed by keel run)</span></span>
<span class="line"><span>  --reject KEY=R  refuse it; the model sees a tool error with the reason R</span></span>
<span class="line"><span>  --execute KEY   run again a call that may or may not have run before a crash (its effect may happen twice)</span></span>
<span class="line"><span>  --abandon KEY   give up on such a call; the model is told its outcome is unknown</span></span>
<span class="line"><span>  --agent FILE    the agent file (relative or absolute), for a run started in another directory or machine</span></span>
<span class="line"><span>  --wait          when another process holds the run (its owner may have died), wait until its lease ends, at</span></span>
<span class="line"><span>                  most 10 minutes, then resume</span></span>
<span class="line"><span>  --json          print the result as JSON</span></span>
<span class="line"><span>  --store URL|PATH  postgres://... or a SQLite file (default: ./.keel/keel.db)</span></span>
<span class="line"><span>  --redis URL     the run is in a fleet (keel worker): answers go through the queue to a worker, a</span></span>
<span class="line"><span>                  cancellation reaches the worker that holds the run at once</span></span>
<span class="line"><span>  --allow-key-host HOST</span></span>
<span class="line"><span>                  let an API key go to HOST (name, or name:port) when the agent file&#39;s baseUrl points there; keys</span></span>
<span class="line"><span>                  go only to the provider&#39;s own host over https otherwise; implies --allow-host HOST</span></span>
<span class="line"><span>  --allow-host HOST</span></span>
<span class="line"><span>                  let the conversation and tool requests go to HOST (name, name:port, or an address range such as</span></span>
<span class="line"><span>                  10.1.0.0/16): a model&#39;s baseUrl, an http: tool&#39;s url or allow: entry, an mcp: url; without it they</span></span>
<span class="line"><span>                  go only to the provider&#39;s own host over https and to this machine (see the README&#39;s trust model)</span></span>
<span class="line"><span>  --allow-programs</span></span>
<span class="line"><span>                  let the agent file start programs: command: tools and mcp: servers run by keel</span></span>
<span class="line"><span>  --allow-env NAME</span></span>
<span class="line"><span>                  let those programs get keel&#39;s NAME, a variable whose name looks like a secret (HOME, LANG or</span></span>
<span class="line"><span>                  LOG_LEVEL pass without it)</span></span>
<span class="line"><span>                  (keel resume keeps the consent a run was started with, and adds these)</span></span>
<span class="line"><span>  --otlp URL      export traces and metrics over OTLP/HTTP to a receiver, such as http://127.0.0.1:4318, as</span></span>
<span class="line"><span>                  service.name OTEL_SERVICE_NAME (default: keel) with OTEL_RESOURCE_ATTRIBUTES; the last export,</span></span>
<span class="line"><span>                  as the command ends, waits at most 2 s for the receiver</span></span>
<span class="line"><span>  --metrics-port N  serve Prometheus metrics at http://127.0.0.1:N/metrics while the run lives, and no longer</span></span>
<span class="line"><span>  --log json      print JSON log lines (one per event, then the result) in place of the live view</span></span>
<span class="line"><span></span></span>
<span class="line"><span>exit codes: 0 completed, 1 failed, 2 invalid input, 3 interrupted (resumable), 130 cancelled</span></span></code></pre></div><h2 id="keel-cancel" tabindex="-1">keel cancel <a class="header-anchor" href="#keel-cancel" aria-label="Permalink to &quot;keel cancel&quot;">​</a></h2><p>cancel a run (an interrupted one, or one a worker holds).</p><div class="language-text vp-adaptive-theme"><button title="Copy Code" class="copy"></button><span class="lang">text</span><pre class="shiki shiki-themes github-light github-dark vp-code" tabindex="0"><code><span class="line"><span>keel cancel: cancel a run; it ends cancelled and cannot be resumed</span></span>
<span class="line"><span></span></span>
<span class="line"><span>usage: keel cancel &lt;run-id&gt; [--reason TEXT] [--json] [--store URL|PATH] [--redis URL]</span></span>
<span class="line"><span></span></span>
<span class="line"><span>options:</span></span>
<span class="line"><span>  --reason TEXT   why, kept with the run</span></span>
<span class="line"><span>  --json          print the result as JSON</span></span>
<span class="line"><span>  --store URL|PATH  postgres://... or a SQLite file (default: ./.keel/keel.db)</span></span>
<span class="line"><span>  --redis URL     the run is in a fleet (keel worker): answers go through the queue to a worker, a</span></span>
<span class="line"><span>                  cancellation reaches the worker that holds the run at once</span></span></code></pre></div><h2 id="keel-chaos" tabindex="-1">keel chaos <a class="header-anchor" href="#keel-chaos" aria-label="Permalink to &quot;keel chaos&quot;">​</a></h2><p>score an agent file in seeded failure scenarios.</p><div class="language-text vp-adaptive-theme"><button title="Copy Code" class="copy"></button><span class="lang">text</span><pre class="shiki shiki-themes github-light github-dark vp-code" tabindex="0"><code><span class="line"><span>keel chaos: run an agent file through seeded failure scenarios and score it</span></span>
<span class="line"><span></span></span>
<span class="line"><span>usage:</span></span>
<span class="line"><span>  keel chaos &lt;agent.yaml&gt; [--scenarios a,b] [--scenarios-file FILE] [--runs N] [--seed N] [--task TEXT]</span></span>
<span class="line"><span>             [--html report.html] [--json]</span></span>
<span class="line"><span>             [--allow-host HOST]... [--allow-programs] [--allow-env NAME]... [--allow-key-host HOST]...</span></span>
<span class="line"><span></span></span>
<span class="line"><span>The agent is built as keel run builds it (its retry, fallback, limit and tool settings are what is measured), with</span></span>
<span class="line"><span>its models replaced by models of the offline simulated provider, which injects each scenario&#39;s faults. All runs of a</span></span>
<span class="line"><span>scenario are under way at once; a run still going after 30 s is given up on and counted hung.</span></span>
<span class="line"><span></span></span>
<span class="line"><span>options:</span></span>
<span class="line"><span>  --scenarios a,b  which scenarios (default: all built-in ones, or the file&#39;s with --scenarios-file)</span></span>
<span class="line"><span>  --scenarios-file FILE</span></span>
<span class="line"><span>                   your own scenarios: a JavaScript module (a path, or a package) exporting \`scenarios\`, an array</span></span>
<span class="line"><span>                   of scenario definitions (see packages/chaos/README.md); it runs with your rights</span></span>
<span class="line"><span>  --runs N         runs per scenario (default: 50)</span></span>
<span class="line"><span>  --seed N         seed of every fault schedule, tool fault and kill (default: 1)</span></span>
<span class="line"><span>  --task TEXT      the task of every run (default: one that calls the agent&#39;s weather and ticket tools)</span></span>
<span class="line"><span>  --html FILE      also write a self-contained HTML report with charts</span></span>
<span class="line"><span>  --json           print the report as JSON instead of the table</span></span>
<span class="line"><span>  --allow-key-host HOST</span></span>
<span class="line"><span>                   as for keel run</span></span>
<span class="line"><span>  --allow-host HOST</span></span>
<span class="line"><span>                  let the conversation and tool requests go to HOST (name, name:port, or an address range such as</span></span>
<span class="line"><span>                  10.1.0.0/16): a model&#39;s baseUrl, an http: tool&#39;s url or allow: entry, an mcp: url; without it they</span></span>
<span class="line"><span>                  go only to the provider&#39;s own host over https and to this machine (see the README&#39;s trust model)</span></span>
<span class="line"><span>  --allow-programs</span></span>
<span class="line"><span>                  let the agent file start programs: command: tools and mcp: servers run by keel</span></span>
<span class="line"><span>  --allow-env NAME</span></span>
<span class="line"><span>                  let those programs get keel&#39;s NAME, a variable whose name looks like a secret (HOME, LANG or</span></span>
<span class="line"><span>                  LOG_LEVEL pass without it)</span></span>
<span class="line"><span></span></span>
<span class="line"><span>scenarios:</span></span>
<span class="line"><span>  transient-10          transient 5xx on 10% of requests</span></span>
<span class="line"><span>  transient-30          transient 5xx on 30% of requests</span></span>
<span class="line"><span>  rate-limit-storm      429 storm with Retry-After on the primary</span></span>
<span class="line"><span>  outage-fallback       primary outage, fallback available</span></span>
<span class="line"><span>  outage-no-fallback    primary outage, no fallback</span></span>
<span class="line"><span>  hang                  responses that never start</span></span>
<span class="line"><span>  reset                 connections reset mid-response</span></span>
<span class="line"><span>  malformed-tool-calls  malformed tool-call JSON and unknown tool names</span></span>
<span class="line"><span>  context-overflow      the conversation outgrows the primary context window</span></span>
<span class="line"><span>  max-tokens            answers cut at the output limit</span></span>
<span class="line"><span>  tool-flaky            a tool that fails intermittently</span></span>
<span class="line"><span>  tool-hang             a tool that hangs</span></span>
<span class="line"><span>  tool-timeout-recall   a side effect that times out after it happened, and a model that calls it again</span></span>
<span class="line"><span>  crash                 the worker process is killed mid-run</span></span>
<span class="line"><span></span></span>
<span class="line"><span>Progress goes to stderr, one line per scenario; the table (or JSON) to stdout.</span></span>
<span class="line"><span>exit codes: 0 every goal that was exercised was met, 1 a goal was missed, 2 invalid input, 130 cancelled</span></span></code></pre></div><h2 id="keel-submit" tabindex="-1">keel submit <a class="header-anchor" href="#keel-submit" aria-label="Permalink to &quot;keel submit&quot;">​</a></h2><p>queue a run for a fleet of workers.</p><div class="language-text vp-adaptive-theme"><button title="Copy Code" class="copy"></button><span class="lang">text</span><pre class="shiki shiki-themes github-light github-dark vp-code" tabindex="0"><code><span class="line"><span>keel submit: queue a run of an agent file for a fleet of workers (keel worker)</span></span>
<span class="line"><span></span></span>
<span class="line"><span>usage:</span></span>
<span class="line"><span>  keel submit &lt;agent.yaml&gt; &quot;&lt;task&gt;&quot; [--store URL|PATH] [--redis URL] [--run-id ID] [--json] [--allow-host HOST]...</span></span>
<span class="line"><span>              [--allow-programs] [--allow-env NAME]... [--allow-key-host HOST]...</span></span>
<span class="line"><span></span></span>
<span class="line"><span>The run is stored as queued in the store at once (keel runs list shows it), then enqueued in Redis for the workers</span></span>
<span class="line"><span>started with this agent file (they take the runs of the agents named in their files). Prints the run id.</span></span>
<span class="line"><span></span></span>
<span class="line"><span>options:</span></span>
<span class="line"><span>  --store URL     the fleet&#39;s run store: postgres://... (or a SQLite file on one machine; default ./.keel/keel.db)</span></span>
<span class="line"><span>  --redis URL     the fleet&#39;s Redis (default: KEEL_REDIS_URL, else redis://127.0.0.1:6379)</span></span>
<span class="line"><span>  --run-id ID     the run&#39;s id (default: a random UUID)</span></span>
<span class="line"><span>  --json          print { runId, agentName, status, enqueued }</span></span>
<span class="line"><span>  --allow-key-host HOST</span></span>
<span class="line"><span>                  as for keel run, when the file&#39;s baseUrl points at another host than its provider&#39;s</span></span>
<span class="line"><span>  --allow-host HOST, --allow-programs, --allow-env NAME</span></span>
<span class="line"><span>                  as for keel run: the file is checked as the workers will check it (they need the same flags)</span></span>
<span class="line"><span></span></span>
<span class="line"><span>exit codes: 0 queued, 1 the store failed, 2 invalid input</span></span></code></pre></div><h2 id="keel-worker" tabindex="-1">keel worker <a class="header-anchor" href="#keel-worker" aria-label="Permalink to &quot;keel worker&quot;">​</a></h2><p>run the queued runs of agent files, as one worker of a fleet.</p><div class="language-text vp-adaptive-theme"><button title="Copy Code" class="copy"></button><span class="lang">text</span><pre class="shiki shiki-themes github-light github-dark vp-code" tabindex="0"><code><span class="line"><span>keel worker: run the queued runs of agent files, as one worker of a fleet</span></span>
<span class="line"><span></span></span>
<span class="line"><span>usage:</span></span>
<span class="line"><span>  keel worker &lt;agent.yaml&gt;... [--store URL|PATH] [--redis URL] [--concurrency N] [--lease-ttl-ms N]</span></span>
<span class="line"><span>              [--policy-state shared|local|closed] [--faults SPEC] [--seed N] [--allow-host HOST]...</span></span>
<span class="line"><span>              [--allow-programs] [--allow-env NAME]... [--allow-key-host HOST]... [--json] [--metrics-port N]</span></span>
<span class="line"><span>              [--otlp URL] [--log json]</span></span>
<span class="line"><span></span></span>
<span class="line"><span>Takes the runs submitted (keel submit) for the agents of its files, runs them durably on the shared store, and</span></span>
<span class="line"><span>prints a line when it takes a run, starts or resumes it, finishes it or hands it back. A run whose worker died is</span></span>
<span class="line"><span>resumed by another from its last checkpoint once the dead worker&#39;s lease ends; a tool call&#39;s effect is never</span></span>
<span class="line"><span>repeated. On SIGTERM or Ctrl-C it takes no more runs, lets the running ones reach a checkpoint with no tool call</span></span>
<span class="line"><span>running, hands them back to the queue for another worker, and exits 0 (also when it comes before the worker is</span></span>
<span class="line"><span>ready: the start stops there).</span></span>
<span class="line"><span></span></span>
<span class="line"><span>The workers of a fleet share their breakers and retry budget through the same Redis: a provider that is down is</span></span>
<span class="line"><span>probed once per half-open period by the whole fleet, and every worker stops calling it once its breaker opens.</span></span>
<span class="line"><span></span></span>
<span class="line"><span>options:</span></span>
<span class="line"><span>  --store URL       the fleet&#39;s run store: postgres://... (or a SQLite file on one machine; default ./.keel/keel.db)</span></span>
<span class="line"><span>  --redis URL       the fleet&#39;s Redis (default: KEEL_REDIS_URL, else redis://127.0.0.1:6379)</span></span>
<span class="line"><span>  --concurrency N   runs at once, per agent (default: 1)</span></span>
<span class="line"><span>  --lease-ttl-ms N  how long a run stays leased to a worker that stopped renewing it: a dead worker&#39;s runs are</span></span>
<span class="line"><span>                    taken again after about this long (default: 30000)</span></span>
<span class="line"><span>  --policy-state shared|local|closed</span></span>
<span class="line"><span>                    where breakers and the retry budget live: shared through Redis, going on with each worker&#39;s own</span></span>
<span class="line"><span>                    state while Redis cannot be reached (shared, the default); shared, refusing model and tool calls</span></span>
<span class="line"><span>                    while Redis cannot be reached (closed); or each worker&#39;s own (local)</span></span>
<span class="line"><span>  --faults SPEC     fault schedule of the simulated provider, as for keel run (default: none)</span></span>
<span class="line"><span>  --seed N          seed of the fault schedule (default: 1)</span></span>
<span class="line"><span>  --json            print one JSON object per line: { type, runId, ... }</span></span>
<span class="line"><span>  --metrics-port N  serve Prometheus metrics at http://127.0.0.1:N/metrics for the worker&#39;s whole life (0 picks a</span></span>
<span class="line"><span>                    free port, printed in the first line): the metrics of every run it executes, as keel run has</span></span>
<span class="line"><span>                    them, with keel_worker_runs_total{agent_name,worker_event,requeue_reason} (runs taken,</span></span>
<span class="line"><span>                    started, resumed, finished, requeued, swept), keel_worker_errors_total{error_type} and, with</span></span>
<span class="line"><span>                    shared policy state, keel_retry_budget_remaining{retry_budget_name=&quot;fleet&quot;}</span></span>
<span class="line"><span>  --otlp URL        export traces and metrics over OTLP/HTTP to a receiver, such as http://127.0.0.1:4318: a span</span></span>
<span class="line"><span>                    tree per run, a resumed run&#39;s span linked to its earlier attempts (in this worker or another),</span></span>
<span class="line"><span>                    and the same metrics; what is left is exported on SIGTERM before the worker exits (waiting at</span></span>
<span class="line"><span>                    most 2 s for the receiver); service.name is OTEL_SERVICE_NAME (default: keel), with the</span></span>
<span class="line"><span>                    attributes of OTEL_RESOURCE_ATTRIBUTES</span></span>
<span class="line"><span>  --log json        print JSON log lines in place of the worker&#39;s lines: every event of every run (retries,</span></span>
<span class="line"><span>                    fallbacks, tool calls, breaker moves; with trace ids under --otlp) and the worker&#39;s own</span></span>
<span class="line"><span>                    (taken, requeued, swept, errors, Redis lost and back); --json prints only the worker&#39;s events</span></span>
<span class="line"><span>  --allow-key-host HOST, --allow-host HOST, --allow-programs, --allow-env NAME</span></span>
<span class="line"><span>                    as for keel run: what the worker&#39;s agent files may do (checked before Redis)</span></span>
<span class="line"><span></span></span>
<span class="line"><span>exit codes: 0 stopped gracefully, 1 the store or Redis failed at the start, or the metrics port is taken,</span></span>
<span class="line"><span>            2 invalid input</span></span></code></pre></div><h2 id="keel-dashboard" tabindex="-1">keel dashboard <a class="header-anchor" href="#keel-dashboard" aria-label="Permalink to &quot;keel dashboard&quot;">​</a></h2><p>serve a web page over the run store.</p><div class="language-text vp-adaptive-theme"><button title="Copy Code" class="copy"></button><span class="lang">text</span><pre class="shiki shiki-themes github-light github-dark vp-code" tabindex="0"><code><span class="line"><span>keel dashboard: a web page over the run store (runs, timelines, reports, pending decisions)</span></span>
<span class="line"><span></span></span>
<span class="line"><span>usage: keel dashboard [--store URL|PATH] [--port N] [--host H] [--token T] [--agent FILE]... [--allow-key-host HOST]... [--allow-host HOST]... [--allow-programs] [--allow-env NAME]... [--json]</span></span>
<span class="line"><span></span></span>
<span class="line"><span>options:</span></span>
<span class="line"><span>  --store URL|PATH  postgres://... or a SQLite file (default: ./.keel/keel.db)</span></span>
<span class="line"><span>  --port N          the port to listen on (default: 4800; 0 picks a free one)</span></span>
<span class="line"><span>  --host H          the interface to bind (default: 127.0.0.1; any other host needs a token)</span></span>
<span class="line"><span>  --token T         the secret the page&#39;s API requires, at least 16 characters</span></span>
<span class="line"><span>                    (default: KEEL_DASHBOARD_TOKEN, else one is generated and printed in the page address)</span></span>
<span class="line"><span>  --agent FILE      an agent file to resume runs of its agent with, for runs not started by keel run in this</span></span>
<span class="line"><span>                    directory (repeat it for several agents; default: none)</span></span>
<span class="line"><span>  --allow-key-host HOST</span></span>
<span class="line"><span>                    let an API key go to HOST (name, or name:port) when an agent file&#39;s baseUrl points there, for</span></span>
<span class="line"><span>                    --agent files and the runs the page resumes (default: none: keys go only to the provider&#39;s own</span></span>
<span class="line"><span>                    host over https)</span></span>
<span class="line"><span>  --allow-host HOST</span></span>
<span class="line"><span>                    let the conversation and tool requests go to HOST (name, name:port, or an address range such as</span></span>
<span class="line"><span>                    10.1.0.0/16): a model&#39;s baseUrl, an http: tool&#39;s url or allow: entry, an mcp: url; without it they</span></span>
<span class="line"><span>                    go only to the provider&#39;s own host over https and to this machine (see the README&#39;s trust model)</span></span>
<span class="line"><span>  --allow-programs</span></span>
<span class="line"><span>                    let the agent file start programs: command: tools and mcp: servers run by keel</span></span>
<span class="line"><span>  --allow-env NAME</span></span>
<span class="line"><span>                    let those programs get keel&#39;s NAME, a variable whose name looks like a secret (HOME, LANG or</span></span>
<span class="line"><span>                    LOG_LEVEL pass without it)</span></span>
<span class="line"><span>                    (for --agent files and the runs the page resumes, besides the consent each run was started with)</span></span>
<span class="line"><span>  --json            print the start-up line as one JSON object: { url, host, port, store, tokenGenerated }</span></span>
<span class="line"><span>  --help, -h        print this help</span></span>
<span class="line"><span></span></span>
<span class="line"><span>Ctrl-C stops the dashboard; runs it resumed are waited for (a second Ctrl-C leaves them resumable).</span></span></code></pre></div><h2 id="keel-runs" tabindex="-1">keel runs <a class="header-anchor" href="#keel-runs" aria-label="Permalink to &quot;keel runs&quot;">​</a></h2><div class="language-text vp-adaptive-theme"><button title="Copy Code" class="copy"></button><span class="lang">text</span><pre class="shiki shiki-themes github-light github-dark vp-code" tabindex="0"><code><span class="line"><span>usage:</span></span>
<span class="line"><span>  keel runs list [--status STATUS] [--limit N] [--json] [--store URL|PATH]</span></span>
<span class="line"><span>  keel runs show &lt;run-id&gt; [--json] [--store URL|PATH]</span></span>
<span class="line"><span></span></span>
<span class="line"><span>keel runs list --help and keel runs show --help give each one&#39;s options.</span></span></code></pre></div><h2 id="keel-sessions" tabindex="-1">keel sessions <a class="header-anchor" href="#keel-sessions" aria-label="Permalink to &quot;keel sessions&quot;">​</a></h2><div class="language-text vp-adaptive-theme"><button title="Copy Code" class="copy"></button><span class="lang">text</span><pre class="shiki shiki-themes github-light github-dark vp-code" tabindex="0"><code><span class="line"><span>usage:</span></span>
<span class="line"><span>  keel sessions list [--limit N] [--json] [--store URL|PATH]</span></span>
<span class="line"><span>  keel sessions show &lt;session-id&gt; [--json] [--store URL|PATH]</span></span>
<span class="line"><span>  keel sessions delete &lt;session-id&gt; [--force] [--json] [--store URL|PATH]</span></span>
<span class="line"><span></span></span>
<span class="line"><span>Sessions are conversations kept across runs (keel chat, or agent.run(input, { sessionId })): one turn per completed run.</span></span>
<span class="line"><span>keel sessions list --help, keel sessions show --help and keel sessions delete --help give each one&#39;s options.</span></span></code></pre></div></div>`);
}
const _sfc_setup = _sfc_main.setup;
_sfc_main.setup = (props, ctx) => {
  const ssrContext = useSSRContext();
  (ssrContext.modules || (ssrContext.modules = /* @__PURE__ */ new Set())).add("reference/cli.md");
  return _sfc_setup ? _sfc_setup(props, ctx) : void 0;
};
const cli = /* @__PURE__ */ _export_sfc(_sfc_main, [["ssrRender", _sfc_ssrRender]]);
export {
  __pageData,
  cli as default
};
