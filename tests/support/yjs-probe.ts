// Browser bundle for the tests: the UNMODIFIED y-webrtc WebrtcProvider and Yjs, exposed on
// globalThis, so a test can run y-webrtc exactly as any third-party client would against our server;
// and our own Room (src/room/room.ts: the same provider plus what Tutti adds), to compare the two.
import * as Y from 'yjs';
import { WebrtcProvider } from 'y-webrtc';
import { Room } from '../../src/room/room.ts';

(globalThis as unknown as { yjsProbe: unknown }).yjsProbe = { Y, WebrtcProvider, Room };
