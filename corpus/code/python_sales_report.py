"""Monthly sales report: reads order exports (CSV), aggregates revenue per
region and product line, and writes a Markdown summary plus a CSV of the
top customers.

Usage:
    python sales_report.py exports/2024-*.csv --month 2024-03 --out reports/
"""

from __future__ import annotations

import argparse
import csv
import logging
import sys
from collections import defaultdict
from dataclasses import dataclass, field
from datetime import date, datetime
from decimal import Decimal, InvalidOperation
from pathlib import Path
from typing import Iterable, Iterator

log = logging.getLogger("sales_report")

REQUIRED_COLUMNS = {"order_id", "ordered_at", "customer", "region", "product_line", "quantity", "unit_price"}


@dataclass(frozen=True)
class Order:
    order_id: str
    ordered_at: datetime
    customer: str
    region: str
    product_line: str
    quantity: int
    unit_price: Decimal

    @property
    def revenue(self) -> Decimal:
        return self.unit_price * self.quantity


@dataclass
class Totals:
    revenue: Decimal = Decimal("0")
    orders: int = 0
    units: int = 0
    customers: set[str] = field(default_factory=set)

    def add(self, order: Order) -> None:
        self.revenue += order.revenue
        self.orders += 1
        self.units += order.quantity
        self.customers.add(order.customer)


class BadRow(ValueError):
    def __init__(self, path: Path, line: int, reason: str) -> None:
        super().__init__(f"{path}:{line}: {reason}")
        self.path = path
        self.line = line


def parse_row(path: Path, line: int, row: dict[str, str]) -> Order:
    try:
        return Order(
            order_id=row["order_id"].strip(),
            ordered_at=datetime.fromisoformat(row["ordered_at"].strip()),
            customer=row["customer"].strip(),
            region=row["region"].strip().upper() or "UNKNOWN",
            product_line=row["product_line"].strip(),
            quantity=int(row["quantity"]),
            unit_price=Decimal(row["unit_price"].replace(",", "")),
        )
    except (ValueError, InvalidOperation) as exc:
        raise BadRow(path, line, str(exc)) from exc


def read_orders(paths: Iterable[Path], strict: bool) -> Iterator[Order]:
    seen: set[str] = set()
    for path in paths:
        with path.open(newline="", encoding="utf-8-sig") as handle:
            reader = csv.DictReader(handle)
            missing = REQUIRED_COLUMNS - set(reader.fieldnames or [])
            if missing:
                raise SystemExit(f"{path}: missing columns {', '.join(sorted(missing))}")
            for line, row in enumerate(reader, start=2):
                try:
                    order = parse_row(path, line, row)
                except BadRow as exc:
                    if strict:
                        raise
                    log.warning("skipping %s", exc)
                    continue
                if order.order_id in seen:
                    log.info("duplicate order %s in %s:%d", order.order_id, path, line)
                    continue
                seen.add(order.order_id)
                yield order


def in_month(order: Order, month: date) -> bool:
    return order.ordered_at.year == month.year and order.ordered_at.month == month.month


def aggregate(orders: Iterable[Order]) -> tuple[dict[tuple[str, str], Totals], dict[str, Decimal]]:
    by_group: dict[tuple[str, str], Totals] = defaultdict(Totals)
    by_customer: dict[str, Decimal] = defaultdict(Decimal)
    for order in orders:
        by_group[(order.region, order.product_line)].add(order)
        by_customer[order.customer] += order.revenue
    return by_group, by_customer


def render_markdown(month: date, by_group: dict[tuple[str, str], Totals]) -> str:
    lines = [f"# Sales report {month:%B %Y}", "", "| region | product line | orders | units | revenue |", "|---|---|---:|---:|---:|"]
    grand = Totals()
    for (region, line), totals in sorted(by_group.items(), key=lambda item: -item[1].revenue):
        lines.append(f"| {region} | {line} | {totals.orders} | {totals.units} | {totals.revenue:,.2f} |")
        grand.revenue += totals.revenue
        grand.orders += totals.orders
        grand.units += totals.units
    lines.append(f"| **total** | | {grand.orders} | {grand.units} | {grand.revenue:,.2f} |")
    return "\n".join(lines) + "\n"


def write_top_customers(path: Path, by_customer: dict[str, Decimal], limit: int) -> None:
    ranked = sorted(by_customer.items(), key=lambda item: item[1], reverse=True)[:limit]
    with path.open("w", newline="", encoding="utf-8") as handle:
        writer = csv.writer(handle)
        writer.writerow(["rank", "customer", "revenue"])
        for rank, (customer, revenue) in enumerate(ranked, start=1):
            writer.writerow([rank, customer, f"{revenue:.2f}"])


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("exports", nargs="+", type=Path)
    parser.add_argument("--month", required=True, help="YYYY-MM")
    parser.add_argument("--out", type=Path, default=Path("reports"))
    parser.add_argument("--top", type=int, default=20)
    parser.add_argument("--strict", action="store_true", help="fail on the first bad row")
    parser.add_argument("-v", "--verbose", action="store_true")
    args = parser.parse_args(argv)

    logging.basicConfig(level=logging.DEBUG if args.verbose else logging.INFO, format="%(levelname)s %(message)s")
    try:
        month = datetime.strptime(args.month, "%Y-%m").date()
    except ValueError:
        parser.error(f"--month expects YYYY-MM, got {args.month!r}")

    orders = [o for o in read_orders(args.exports, args.strict) if in_month(o, month)]
    if not orders:
        log.error("no orders in %s", args.month)
        return 1
    by_group, by_customer = aggregate(orders)
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / f"sales-{args.month}.md").write_text(render_markdown(month, by_group), encoding="utf-8")
    write_top_customers(args.out / f"top-customers-{args.month}.csv", by_customer, args.top)
    log.info("%d orders, %d groups, report in %s", len(orders), len(by_group), args.out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
