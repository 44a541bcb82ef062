"""Real-browser tests (Playwright + Debian Chromium); a package so their module names never clash with tests/."""
