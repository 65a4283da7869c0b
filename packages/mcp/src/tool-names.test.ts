import { TOOL_NAME_PATTERN } from '@keel/core/adapter';
import { describe, expect, it } from 'vitest';
import { keelToolNames } from './tool-names.js';

describe('keelToolNames', () => {
  it('puts the prefix first and replaces what providers refuse', () => {
    expect(keelToolNames(['read_file', 'git.log', 'a/b c'], 'fs')).toEqual([
      'fs_read_file',
      'fs_git_log',
      'fs_a_b_c',
    ]);
    expect(keelToolNames(['get-sum'], undefined)).toEqual(['get-sum']);
  });

  it('gives names that collide after replacement, and names too long, a stable hash suffix', () => {
    const names = keelToolNames(['git.log', 'git_log', 'x'.repeat(70)], 'p');
    expect(names[0]).toBe('p_git_log');
    expect(names[1]).toMatch(/^p_git_log_[0-9a-f]{8}$/);
    expect(names[2]).toHaveLength(64);
    expect(names[2]).toMatch(/^p_x+_[0-9a-f]{8}$/);
    expect(new Set(names).size).toBe(3);
    for (const name of names) expect(name).toMatch(TOOL_NAME_PATTERN);
    expect(keelToolNames(['git.log', 'git_log', 'x'.repeat(70)], 'p')).toEqual(names);
  });
});
