export { watchBoard, type BoardWatcher, type WatchBoardOptions, type WatchEvent } from './watch-board.js';
