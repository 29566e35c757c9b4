// The page's one way to write: the components take `act` from App, which
// sends the write and shows how it went as a notice. Its types live here, not
// in app.tsx, so the components App renders do not import App back.
import type { WebWriteResult } from '../src/wire';

/** A message at the bottom of the page: what a write did, or why it was refused. */
export interface Notice {
  kind: 'ok' | 'error';
  text: string;
}

/** What components call to change the board; refusals become a notice with the server's message. */
export type Act = (method: 'POST' | 'PATCH' | 'DELETE', path: string, body: unknown, done: string) => Promise<WebWriteResult | undefined>;
