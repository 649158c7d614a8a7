// Page entry point (main thread): registers the UI. No audio is processed on this thread.
import './ui/tutti-app.ts';
