// Browser bundle for the tests: the UNMODIFIED y-webrtc WebrtcProvider and Yjs, exposed on
// globalThis, so a test can run y-webrtc exactly as any third-party client would against our server.
import * as Y from 'yjs';
import { WebrtcProvider } from 'y-webrtc';

(globalThis as unknown as { yjsProbe: unknown }).yjsProbe = { Y, WebrtcProvider };
