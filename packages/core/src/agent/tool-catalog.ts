import type { ToolDefinition } from '../spec/model.js';
import type { Tool, ToolSource } from '../spec/tool.js';
import type { ToolSlots } from './agent-dependencies.js';
import type { ToolCatalog, ToolSlot } from './run/agent-runtime.js';
import { toToolDefinition } from './tools/tool.js';

/** What a {@link SourcedToolCatalog} keeps up to date: the runtime's view of its tools. */
export interface ToolView {
  tools: ReadonlyMap<string, ToolSlot>;
  toolNames: readonly string[];
  toolDefinitions: ToolDefinition[] | undefined;
}

/**
 * The tools of an agent with tool sources: its plain tools, then each source's tools in order. A source is listed
 * again only when its `version` moved; a tool whose name an earlier entry already has is left out, with one process
 * warning per name. Runs of the agent share the view, so a run sees a list updated by another run.
 */
export class SourcedToolCatalog implements ToolCatalog {
  private readonly seen: number[];
  private readonly lists: (readonly Tool[])[];
  private readonly listed: boolean[];
  private updating: Promise<void> | undefined;
  private readonly warned = new Set<string>();

  constructor(
    private readonly view: ToolView,
    private readonly plain: readonly Tool[],
    private readonly sources: readonly ToolSource[],
    private readonly slots: ToolSlots,
  ) {
    this.seen = sources.map(() => Number.NaN);
    this.lists = sources.map((source) => source.current);
    this.listed = sources.map(() => false);
  }

  get stale(): boolean {
    for (let index = 0; index < this.sources.length; index++) {
      if (this.sources[index]!.version !== this.seen[index]) return true;
    }
    return false;
  }

  update(): Promise<void> {
    this.updating ??= this.read().finally(() => {
      this.updating = undefined;
    });
    return this.updating;
  }

  private async read(): Promise<void> {
    const versions = this.sources.map((source) => source.version);
    const outcomes = await Promise.allSettled(
      this.sources.map((source, index) =>
        versions[index] === this.seen[index] ? this.lists[index]! : source.tools(),
      ),
    );
    let failure: { error: unknown } | undefined;
    outcomes.forEach((outcome, index) => {
      if (outcome.status === 'fulfilled') {
        this.lists[index] = outcome.value;
        this.listed[index] = true;
        this.seen[index] = versions[index]!;
      } else if (!this.listed[index]) {
        failure ??= { error: outcome.reason };
      }
      // A source that listed before keeps its last list, and is asked again at the next step.
    });
    this.apply();
    if (failure !== undefined) throw failure.error;
  }

  private apply(): void {
    const names = new Set<string>();
    const tools: Tool[] = [];
    for (const entry of this.plain) {
      names.add(entry.name);
      tools.push(entry);
    }
    for (const list of this.lists) {
      for (const entry of list) {
        if (names.has(entry.name)) {
          if (!this.warned.has(entry.name)) {
            this.warned.add(entry.name);
            process.emitWarning(
              `keel: two tools are named "${entry.name}"; the agent offers the first only (give a tool source a prefix)`,
            );
          }
          continue;
        }
        names.add(entry.name);
        tools.push(entry);
      }
    }
    const unchanged =
      tools.length === this.view.tools.size &&
      tools.every((entry) => this.view.tools.get(entry.name)?.tool === entry);
    if (unchanged) return;
    const slots = this.slots.index(tools);
    this.view.tools = slots;
    this.view.toolNames = [...slots.keys()];
    this.view.toolDefinitions = tools.length === 0 ? undefined : tools.map(toToolDefinition);
  }
}
