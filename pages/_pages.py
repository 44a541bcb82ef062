"""The dashboard's pages, one registration each: its file, title and icon, its docs page and its picture.

PAGES is the one page list. The navigation (_nav.py), the docs site's "The dashboard" section (mkdocs.yml's
nav is filled from it at build time by docs/gen_reference.py), the screenshot test
(tests/browser/test_screenshots.py) and the docs tests all read it, so a page is added in one place:

    DEPLOY_PAGE = "pages/deploy.py"
    Page(DEPLOY_PAGE, "Deploy", ":material/rocket:", docs="dashboard/deploy.md",
         picture="images/dashboard-deploy.png"),

`missing_parts` says what a registered page still lacks (its docs page, its picture, the picture on the
page); tests/test_docs.py asks it of every page, without a browser. Kept free of Streamlit, so the docs
build (which has no dashboard extra) can read it. Adding a page, step by step: docs/extending.md.
"""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import List, Tuple

PNG = b"\x89PNG\r\n\x1a\n"
DOCS = Path(__file__).resolve().parent.parent / "docs"


@dataclass(frozen=True)
class Page:
    """One dashboard page. `docs` and `picture` are paths under docs/: the page's docs page, and the
    screenshot tests/browser/test_screenshots.py takes of it (and that docs page shows)."""

    path: str  # the script, for st.Page and st.switch_page: "pages/evaluate.py"
    title: str
    icon: str
    docs: str  # "dashboard/evaluate.md"
    picture: str  # "images/dashboard-evaluate.png"

    @property
    def slug(self) -> str:
        """The page's short name: its docs page's ("spot-check"), and its screenshot's artifact name."""
        return Path(self.docs).stem

    @property
    def url_path(self) -> str:
        """Where Streamlit serves it: the script's name ("spot_check"); the first page is also served at "/"."""
        return Path(self.path).stem


def missing_parts(page: Page, docs: Path = DOCS) -> List[str]:
    """What `page` lacks before it can ship: its docs page, its picture (a PNG), the picture shown on the page."""
    doc, picture = docs / page.docs, docs / page.picture
    problems = []
    if not doc.is_file():
        problems.append(f"the {page.title} page has no docs page: write docs/{page.docs}")
    if not picture.is_file() or picture.read_bytes()[:8] != PNG:
        problems.append(f"the {page.title} page has no picture docs/{page.picture}: run "
                        "RAGMETER_UPDATE_SCREENSHOTS=1 pytest -n0 -m browser tests/browser/test_screenshots.py")
    elif doc.is_file():
        shown = "/".join([".."] * (len(Path(page.docs).parts) - 1) + [page.picture])  # relative to the docs page
        if shown not in doc.read_text(encoding="utf-8"):
            problems.append(f"docs/{page.docs} does not show its picture: add ![{page.title}]({shown})")
    return problems


def nav_section(pages: Tuple[Page, ...]) -> List[object]:
    """The docs site's entries for `pages`, as mkdocs.yml's nav writes them: [{title: docs page}, ...]."""
    return [{page.title: page.docs} for page in pages]


# Page files, for st.switch_page.
EVALUATE_PAGE = "pages/evaluate.py"
REPORT_PAGE = "pages/report.py"
SPOT_PAGE = "pages/spot_check.py"
REVIEW_PAGE = "pages/review.py"
GENERATE_PAGE = "pages/generate.py"
HISTORY_PAGE = "pages/history.py"
MONITOR_PAGE = "pages/monitor.py"

# The navigation, in the sidebar's order, the default first. The docs site lists them in this order too.
PAGES: Tuple[Page, ...] = (
    Page(EVALUATE_PAGE, "Evaluate", ":material/science:", "dashboard/evaluate.md", "images/dashboard-evaluate.png"),
    Page(REPORT_PAGE, "Report", ":material/bar_chart:", "dashboard/report.md", "images/dashboard-report.png"),
    Page(SPOT_PAGE, "Spot check", ":material/search:", "dashboard/spot-check.md", "images/dashboard-spot-check.png"),
    Page(REVIEW_PAGE, "Review", ":material/rate_review:", "dashboard/review.md", "images/dashboard-review.png"),
    Page(GENERATE_PAGE, "Generate", ":material/quiz:", "dashboard/generate.md", "images/dashboard-generate.png"),
    Page(HISTORY_PAGE, "History", ":material/history:", "dashboard/history.md", "images/dashboard-history.png"),
    Page(MONITOR_PAGE, "Monitor", ":material/monitoring:", "dashboard/monitor.md", "images/dashboard-monitor.png"),
)
