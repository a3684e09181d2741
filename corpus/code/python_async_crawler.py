import asyncio
import hashlib
import json
import re
import time
from dataclasses import asdict, dataclass
from typing import Optional
from urllib.parse import urldefrag, urljoin, urlparse

import aiohttp

LINK_RE = re.compile(r'<a\s[^>]*href=["\']([^"\'#]+)', re.IGNORECASE)
TITLE_RE = re.compile(r"<title[^>]*>(.*?)</title>", re.IGNORECASE | re.DOTALL)


@dataclass
class Page:
    url: str
    status: int
    title: Optional[str]
    bytes: int
    sha256: str
    links: int
    elapsed_ms: float
    depth: int


class RateLimiter:
    """At most `rate` requests per second per host."""

    def __init__(self, rate: float) -> None:
        self.interval = 1.0 / rate
        self.next_slot: dict[str, float] = {}
        self.lock = asyncio.Lock()

    async def wait(self, host: str) -> None:
        async with self.lock:
            now = time.monotonic()
            slot = max(now, self.next_slot.get(host, now))
            self.next_slot[host] = slot + self.interval
        delay = slot - time.monotonic()
        if delay > 0:
            await asyncio.sleep(delay)


class Crawler:
    def __init__(self, root: str, max_pages: int = 200, max_depth: int = 3, workers: int = 8, rate: float = 4.0):
        self.root = root
        self.allowed_host = urlparse(root).netloc
        self.max_pages = max_pages
        self.max_depth = max_depth
        self.workers = workers
        self.limiter = RateLimiter(rate)
        self.queue: asyncio.Queue[tuple[str, int]] = asyncio.Queue()
        self.seen: set[str] = set()
        self.pages: list[Page] = []
        self.errors: dict[str, str] = {}

    def normalize(self, base: str, href: str) -> Optional[str]:
        url, _fragment = urldefrag(urljoin(base, href.strip()))
        parsed = urlparse(url)
        if parsed.scheme not in ("http", "https") or parsed.netloc != self.allowed_host:
            return None
        if any(url.endswith(ext) for ext in (".png", ".jpg", ".pdf", ".zip", ".svg")):
            return None
        return url.rstrip("/") or url

    async def enqueue(self, url: str, depth: int) -> None:
        if url in self.seen or len(self.seen) >= self.max_pages or depth > self.max_depth:
            return
        self.seen.add(url)
        await self.queue.put((url, depth))

    async def fetch(self, session: aiohttp.ClientSession, url: str, depth: int) -> None:
        await self.limiter.wait(urlparse(url).netloc)
        started = time.perf_counter()
        try:
            async with session.get(url, allow_redirects=True) as response:
                body = await response.read()
                elapsed = (time.perf_counter() - started) * 1000
                text = body.decode(response.charset or "utf-8", errors="replace")
                links = LINK_RE.findall(text) if "html" in response.content_type else []
                title_match = TITLE_RE.search(text)
                self.pages.append(
                    Page(
                        url=url,
                        status=response.status,
                        title=title_match.group(1).strip() if title_match else None,
                        bytes=len(body),
                        sha256=hashlib.sha256(body).hexdigest(),
                        links=len(links),
                        elapsed_ms=round(elapsed, 1),
                        depth=depth,
                    )
                )
                for href in links:
                    child = self.normalize(url, href)
                    if child:
                        await self.enqueue(child, depth + 1)
        except (aiohttp.ClientError, asyncio.TimeoutError) as exc:
            self.errors[url] = f"{type(exc).__name__}: {exc}"

    async def worker(self, session: aiohttp.ClientSession) -> None:
        while True:
            url, depth = await self.queue.get()
            try:
                await self.fetch(session, url, depth)
            finally:
                self.queue.task_done()

    async def run(self) -> dict:
        timeout = aiohttp.ClientTimeout(total=20, connect=5)
        headers = {"User-Agent": "site-audit/0.3 (+https://example.org/bot)"}
        async with aiohttp.ClientSession(timeout=timeout, headers=headers) as session:
            await self.enqueue(self.root, 0)
            tasks = [asyncio.create_task(self.worker(session)) for _ in range(self.workers)]
            await self.queue.join()
            for task in tasks:
                task.cancel()
            await asyncio.gather(*tasks, return_exceptions=True)
        duplicates: dict[str, list[str]] = {}
        for page in self.pages:
            duplicates.setdefault(page.sha256, []).append(page.url)
        return {
            "root": self.root,
            "pages": [asdict(p) for p in sorted(self.pages, key=lambda p: p.url)],
            "errors": self.errors,
            "duplicate_content": [urls for urls in duplicates.values() if len(urls) > 1],
            "broken": [p.url for p in self.pages if p.status >= 400],
        }


if __name__ == "__main__":
    import argparse

    parser = argparse.ArgumentParser()
    parser.add_argument("root")
    parser.add_argument("--max-pages", type=int, default=200)
    parser.add_argument("--depth", type=int, default=3)
    parser.add_argument("--rate", type=float, default=4.0)
    args = parser.parse_args()
    report = asyncio.run(Crawler(args.root, args.max_pages, args.depth, rate=args.rate).run())
    print(json.dumps(report, indent=2))
