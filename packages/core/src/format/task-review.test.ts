import { describe, expect, it } from 'vitest';
import { CorruptTaskError } from '../errors.js';
import { copyTask, inReview, parseTask, reviewRequired, serializeTask } from './format.js';

const file = '/b/.tasks/task_3.json';
const base = { id: 3, subject: 'S', description: '', status: 'in_progress', owner: 'ann', blockedBy: [], blocks: [] };

describe("a task's review in its file", () => {
  it('reads and writes it after result, its known keys in order and the others kept; an empty one is written as nothing', () => {
    const text = JSON.stringify({ ...base, review: { x: 1, since: '2026-01-01T00:00:00.000Z', state: 'waiting', required: true }, result: 'r', metadata: {} });
    const task = parseTask(text, file);
    expect(inReview(task)).toBe(true);
    const out = JSON.parse(serializeTask(task)) as Record<string, unknown>;
    expect(Object.keys(out).slice(-3)).toEqual(['result', 'review', 'metadata']);
    expect(Object.keys(out.review as object)).toEqual(['required', 'state', 'since', 'x']);
    expect(parseTask(serializeTask(task), file)).toEqual(task);
    const copy = copyTask(task);
    copy.review!.state = 'approved';
    expect(task.review!.state).toBe('waiting');
    expect(serializeTask(parseTask(JSON.stringify({ ...base, review: {} }), file))).not.toContain('review');
  });

  it('inReview needs both: in progress and waiting (a file an older version completed or released is not in review)', () => {
    const at = (status: string, state?: string) => parseTask(JSON.stringify({ ...base, status, ...(state ? { review: { state } } : {}) }), file);
    expect(inReview(at('in_progress', 'waiting'))).toBe(true);
    expect(inReview(at('completed', 'waiting'))).toBe(false);
    expect(inReview(at('pending', 'waiting'))).toBe(false);
    expect(inReview(at('in_progress'))).toBe(false);
    expect(reviewRequired(at('pending'), true)).toBe(true);
    expect(reviewRequired(parseTask(JSON.stringify({ ...base, review: { required: false } }), file), true)).toBe(false);
  });

  it('refuses a review of the wrong shape with its place in the file', () => {
    for (const [review, problem] of [
      ['yes', '"review" must be an object'],
      [{ state: 'maybe' }, '"review.state" must be one of waiting, approved, rejected'],
      [{ required: 'true' }, '"review.required" must be true or false'],
      [{ by: 7 }, '"review.by" must be a string'],
    ] as const) {
      const text = JSON.stringify({ ...base, review }, null, 2);
      expect(() => parseTask(text, file)).toThrow(CorruptTaskError);
      expect(() => parseTask(text, file)).toThrow(problem);
      expect(() => parseTask(text, file)).toThrow(/task_3\.json:9:/);
    }
  });
});
