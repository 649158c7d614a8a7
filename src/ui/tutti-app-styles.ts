// Styles of the app shell (<tutti-app>) and of its views (<tutti-join>, <tutti-room>,
// <tutti-remote-view>): one look, in two sheets because each element has its own shadow root.

import { css } from 'lit';

/** <tutti-app>: the page's column, its heading and the error line. */
export const shellStyles = css`
  :host { display: block; max-width: 880px; overflow-wrap: anywhere; margin: 0 auto; padding: 16px; box-sizing: border-box; }
  h1 { font-size: 22px; margin: 0 0 12px; }
  .error { background: #4a1f22; border: 1px solid #a33; padding: 10px 12px; border-radius: 6px; }
  @media (max-width: 600px) {
    :host { padding: 10px; }
    h1 { font-size: 18px; margin-bottom: 8px; }
  }
`;

/** The views inside it. */
export const viewStyles = css`
  :host { display: block; }
  form, section { display: grid; gap: 12px; }
  label { display: grid; gap: 4px; font-size: 14px; color: #c4d0dc; }
  input[type='text'] { font: inherit; padding: 10px; border-radius: 6px; border: 1px solid #3a4857; background: #18212b; color: inherit; }
  fieldset { border: 1px solid #3a4857; border-radius: 6px; display: flex; gap: 16px; }
  fieldset label { display: flex; align-items: center; gap: 6px; }
  button { font: inherit; min-height: 44px; min-width: 44px; padding: 0 16px; border-radius: 6px; border: 1px solid #3a4857; background: #222d39; color: inherit; cursor: pointer; }
  button.primary { background: #2f7d62; border-color: #3fb58a; }
  button[aria-pressed='true'] { background: #7a2e2e; border-color: #a33; }
  button:focus-visible, input:focus-visible, select:focus-visible { outline: 2px solid #6cb6ff; outline-offset: 2px; }
  .error { background: #4a1f22; border: 1px solid #a33; padding: 10px 12px; border-radius: 6px; }
  .bar { display: flex; align-items: center; gap: 12px; flex-wrap: wrap; }
  .bar .grow { flex: 1; }
  .self { display: grid; gap: 8px; padding: 12px; border-radius: 8px; background: #18212b; }
  .controls { display: grid; grid-template-columns: repeat(auto-fit, minmax(220px, 1fr)); gap: 12px; }
  .peers { display: grid; gap: 8px; }
  .muted-note { color: #9fb0c0; font-size: 14px; }
  .clip { color: #e5534b; font-weight: 700; }
  h2 { font-size: 15px; margin: 0; }
  h3.sub { font-size: 14px; margin: 12px 0 4px; color: #c4d0dc; }
  select, input[type='password'], input[type='number'] { font: inherit; min-height: 44px; padding: 0 10px; border-radius: 6px; border: 1px solid #3a4857; background: #18212b; color: inherit; box-sizing: border-box; }
  input[type='text'], input[type='password'] { min-height: 44px; box-sizing: border-box; width: 100%; }
  input[type='range'] { min-height: 44px; margin: 0; width: 100%; }
  input[type='radio'] { width: 22px; height: 22px; }
  fieldset label { min-height: 44px; }
  label.check { min-height: 44px; display: flex; align-items: center; gap: 8px; }
  .card { display: grid; gap: 8px; padding: 12px; border-radius: 8px; background: #18212b; }
  details.card summary { min-height: 44px; line-height: 44px; cursor: pointer; }
  .roster, .recent ul { list-style: none; margin: 0; padding: 0; display: grid; gap: 4px; }
  .recent li { display: flex; align-items: center; gap: 8px; flex-wrap: wrap; }
  button.link { background: none; border-color: transparent; text-decoration: underline; padding: 0 4px; overflow-wrap: anywhere; text-align: left; }
  .room-name { overflow-wrap: anywhere; min-width: 0; }
  .error button { margin-top: 8px; display: block; }
  /* Phone widths: one column, compact, nothing wider than the screen. */
  @media (max-width: 600px) {
    .controls { grid-template-columns: 1fr; gap: 6px; }
    .self { padding: 10px; }
    .wide-only { display: none; }
    button.mute { flex: 1; }
  }
`;
