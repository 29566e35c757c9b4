/**
 * A task's review (docs/protocol.md, "Review"): whether finishing it waits
 * for someone other than its owner to approve it, and where that stands.
 * One object, `review`, kept in the task file:
 *
 * - `required`: true, the task waits for review when it is finished; false,
 *   it does not even when the board requires review; absent, the board's
 *   `"review"` in config.json decides;
 * - `state`: `waiting` (with `since`, when it entered review), `approved` or
 *   `rejected` (with `by` and `at`), absent until it was first finished.
 *
 * A task waiting for review keeps `"status": "in_progress"`, so an older
 * dotasks, Claude Code's own task lists and anything else that reads only
 * the status see it as not done, its dependents still blocked. Here only its
 * shape in a file and the one predicate, inReview; format.ts calls these
 * for its Task (and this file may not import format.ts).
 */

export const REVIEW_STATES = ['waiting', 'approved', 'rejected'] as const;
export type ReviewState = (typeof REVIEW_STATES)[number];

/** The `review` object of a task file; keys it does not know are kept as they came. */
export interface TaskReview {
  required?: boolean;
  state?: ReviewState;
  /** When it entered review (ISO 8601 UTC), while `waiting`. */
  since?: string;
  /** Who approved or rejected it, and when. */
  by?: string;
  at?: string;
  [key: string]: unknown;
}

/** Known keys of `review`, in the order a file holds them. */
const REVIEW_KEYS = ['required', 'state', 'since', 'by', 'at'] as const;

/** The least of a task that the review rules read. */
type Reviewed = { status: string; review?: TaskReview };

/** True when the task waits for review: in progress, its work finished, until someone other than its owner approves or rejects it. */
export function inReview(task: Reviewed): boolean {
  return task.status === 'in_progress' && task.review?.state === 'waiting';
}

/** Whether finishing the task puts it in review: its own `required`, else the board's `review`. */
export function reviewRequired(task: { review?: TaskReview }, boardReview: boolean): boolean {
  return task.review?.required ?? boardReview;
}

/** A copy of JSON data into own properties only (keys like `__proto__` stay data). */
function copyData(value: unknown): unknown {
  return JSON.parse(JSON.stringify(value)) as unknown;
}

/**
 * The `review` of a parsed task file, copied, or undefined when absent;
 * `fail` refuses the file at the key. An empty object reads as absent.
 */
export function readReviewField(
  obj: Record<string, unknown>,
  fail: (key: string, problem: string) => never,
  show: (value: unknown) => string,
): TaskReview | undefined {
  const value = obj.review;
  if (value === undefined) return undefined;
  if (value === null || typeof value !== 'object' || Array.isArray(value))
    fail('review', `"review" must be an object {required?, state?, since?, by?, at?}, got ${show(value)}`);
  const review = value as Record<string, unknown>;
  if (review.required !== undefined && typeof review.required !== 'boolean')
    fail('review', `"review.required" must be true or false, got ${show(review.required)}`);
  if (review.state !== undefined && !(REVIEW_STATES as readonly unknown[]).includes(review.state))
    fail('review', `"review.state" must be one of ${REVIEW_STATES.join(', ')}, got ${show(review.state)}`);
  for (const key of ['since', 'by', 'at'] as const)
    if (review[key] !== undefined && typeof review[key] !== 'string') fail('review', `"review.${key}" must be a string, got ${show(review[key])}`);
  return Object.keys(review).length ? (copyData(review) as TaskReview) : undefined;
}

/** `review` in canonical key order (the known keys, then the others as they came); undefined when it holds nothing. */
export function reviewOut(review: TaskReview | undefined): Record<string, unknown> | undefined {
  if (review === undefined) return undefined;
  const out = Object.create(null) as Record<string, unknown>;
  const set = (key: string, value: unknown) => Object.defineProperty(out, key, { value, enumerable: true, writable: true, configurable: true });
  for (const key of REVIEW_KEYS) if (review[key] !== undefined) set(key, review[key]);
  for (const key of Object.keys(review)) if (!(REVIEW_KEYS as readonly string[]).includes(key) && review[key] !== undefined) set(key, review[key]);
  return Object.keys(out).length ? out : undefined;
}

/** A fresh copy of a review, or undefined. */
export function copyReview(review: TaskReview | undefined): TaskReview | undefined {
  return review === undefined ? undefined : (copyData(review) as TaskReview);
}
