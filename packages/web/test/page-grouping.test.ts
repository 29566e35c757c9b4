import { describe, expect, it } from 'vitest';
import { groupUnderParents } from '../page/model.js';
import type { WebTask } from '../src/wire.js';

/** Just what the grouping reads of a task: its id and parent. */
const task = (id: number, parent?: number) => ({ id, ...(parent !== undefined ? { parent } : {}) }) as WebTask;
const shape = (cards: ReturnType<typeof groupUnderParents>) => cards.map((c) => [c.task.id, c.depth, c.parentElsewhere ?? null]);

// The page's grouping of a column (docs/decisions.md, "Parents on the boards"), the same rule as the terminal board's.
describe('children under their parent in a column', () => {
  it('keeps a column without parents as it is, and says whose a child elsewhere is', () => {
    expect(shape(groupUnderParents([task(3), task(1, 9), task(2)]))).toEqual([
      [3, 0, null],
      [1, 0, 9],
      [2, 0, null],
    ]);
  });

  it('stands a group where its best-placed member would stand, children in the column order, deeper levels deeper', () => {
    // The column's order (say, the claim order): #7, #4, #9, #5, #8; #9 is #4's parent and #5's; #8 is #5's child.
    const cards = [task(7), task(4, 9), task(9), task(5, 9), task(8, 5)];
    expect(shape(groupUnderParents(cards))).toEqual([
      [7, 0, null],
      [9, 0, null],
      [4, 1, null],
      [5, 1, null],
      [8, 2, null],
    ]);
    // #8 placed first pulls its whole chain up: #9's group stands first, and #5 (holding #8) before #4.
    expect(shape(groupUnderParents([task(8, 5), task(7), task(4, 9), task(9), task(5, 9)]))).toEqual([
      [9, 0, null],
      [5, 1, null],
      [8, 2, null],
      [4, 1, null],
      [7, 0, null],
    ]);
  });

  it('shows each task of a cycle of parents made by hand once', () => {
    expect(shape(groupUnderParents([task(2, 1), task(3), task(1, 2)]))).toEqual([
      [3, 0, null],
      [2, 0, 1],
      [1, 1, null],
    ]);
  });
});
