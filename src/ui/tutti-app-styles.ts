import { css } from 'lit';

export const appStyles = css`
  :host { display: block; max-width: 880px; margin: 0 auto; padding: 16px; box-sizing: border-box; }
  h1 { font-size: 22px; margin: 0 0 12px; }
  form, section { display: grid; gap: 12px; }
  label { display: grid; gap: 4px; font-size: 14px; color: #c4d0dc; }
  input[type='text'] { font: inherit; padding: 10px; border-radius: 6px; border: 1px solid #3a4857; background: #18212b; color: inherit; }
  fieldset { border: 1px solid #3a4857; border-radius: 6px; display: flex; gap: 16px; }
  fieldset label { display: flex; align-items: center; gap: 6px; }
  button { font: inherit; min-height: 44px; padding: 0 16px; border-radius: 6px; border: 1px solid #3a4857; background: #222d39; color: inherit; cursor: pointer; }
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
`;
