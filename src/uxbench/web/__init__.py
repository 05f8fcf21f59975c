"""`uxbench view`: a local web app over run directories and mining outputs (the `web` extra: FastAPI, Jinja2,
markdown-it-py, nh3). Every script and style is served from this package; nothing is fetched from a CDN.

- `catalog.py`: the run and mining directories named on the command line, addressed by id (never by a path
  taken from a request);
- `sample_index.py`: a per-run SQLite index of the samples (filters, full-text search, pagination);
- `render.py`: Markdown -> sanitised HTML for everything that comes from a conversation;
- `security.py`: CSRF tokens and the checks every POST goes through;
- `app.py`: the app factory; `pages/`: the routes, one module per page;
- `site.py`: the static leaderboard site (`uxbench site build`).
"""
