export { startServer, DEFAULT_HOST, type WebServer, type WebServerOptions } from './server.js';
export { isLoopback, isWildcard } from './host-names.js';
export { createBoardFeed, type BoardFeed, type BoardFeedOptions, type FeedMessage } from './board-feed.js';
export { readBoardState } from './board-state.js';
export type { Column, WebEvent, WebError, WebLease, WebNodeState, WebNote, WebProblem, WebState, WebTask, WebWriteResult } from './wire.js';
