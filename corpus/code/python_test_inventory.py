import pytest

from inventory.models import Item, Location, StockError
from inventory.service import InventoryService, Reservation


@pytest.fixture
def warehouse():
    return Location(code="WH-01", name="Main warehouse", capacity=10_000)


@pytest.fixture
def service(warehouse):
    svc = InventoryService(locations=[warehouse])
    svc.receive(Item(sku="BOLT-M8", description="Hex bolt M8x40", unit="pcs"), warehouse.code, 500)
    svc.receive(Item(sku="NUT-M8", description="Hex nut M8", unit="pcs"), warehouse.code, 800)
    return svc


def test_receive_increases_on_hand(service, warehouse):
    service.receive(Item(sku="BOLT-M8", description="Hex bolt M8x40", unit="pcs"), warehouse.code, 100)
    assert service.on_hand("BOLT-M8", warehouse.code) == 600


def test_reservation_reduces_available_but_not_on_hand(service, warehouse):
    reservation = service.reserve("BOLT-M8", warehouse.code, 120, order_id="SO-1001")
    assert isinstance(reservation, Reservation)
    assert service.on_hand("BOLT-M8", warehouse.code) == 500
    assert service.available("BOLT-M8", warehouse.code) == 380


def test_cannot_reserve_more_than_available(service, warehouse):
    service.reserve("NUT-M8", warehouse.code, 700, order_id="SO-1002")
    with pytest.raises(StockError, match="only 100 NUT-M8 available"):
        service.reserve("NUT-M8", warehouse.code, 101, order_id="SO-1003")


def test_cancelling_a_reservation_releases_stock(service, warehouse):
    reservation = service.reserve("NUT-M8", warehouse.code, 50, order_id="SO-1004")
    service.cancel(reservation.id)
    assert service.available("NUT-M8", warehouse.code) == 800


def test_cancel_is_idempotent(service, warehouse):
    reservation = service.reserve("NUT-M8", warehouse.code, 50, order_id="SO-1005")
    service.cancel(reservation.id)
    service.cancel(reservation.id)
    assert service.available("NUT-M8", warehouse.code) == 800


@pytest.mark.parametrize(
    "quantity, message",
    [
        (0, "quantity must be positive"),
        (-5, "quantity must be positive"),
        (10_001, "exceeds capacity of WH-01"),
    ],
)
def test_receive_validates_quantity(service, warehouse, quantity, message):
    with pytest.raises(StockError, match=message):
        service.receive(Item(sku="WASHER-8", description="Washer 8mm", unit="pcs"), warehouse.code, quantity)


def test_ship_consumes_the_reservation(service, warehouse):
    reservation = service.reserve("BOLT-M8", warehouse.code, 200, order_id="SO-1006")
    shipment = service.ship(reservation.id, carrier="DHL", tracking="JD014600003828382")
    assert shipment.quantity == 200
    assert service.on_hand("BOLT-M8", warehouse.code) == 300
    assert service.available("BOLT-M8", warehouse.code) == 300
    with pytest.raises(StockError, match="already shipped"):
        service.ship(reservation.id, carrier="DHL", tracking="JD014600003828383")


def test_transfer_between_locations(service, warehouse):
    store = Location(code="ST-07", name="Store Lyon", capacity=500)
    service.add_location(store)
    service.transfer("BOLT-M8", source=warehouse.code, target=store.code, quantity=150)
    assert service.on_hand("BOLT-M8", warehouse.code) == 350
    assert service.on_hand("BOLT-M8", store.code) == 150
    history = service.movements("BOLT-M8")
    assert [m.kind for m in history] == ["receive", "transfer_out", "transfer_in"]


def test_low_stock_report_lists_items_below_threshold(service, warehouse):
    service.reserve("BOLT-M8", warehouse.code, 460, order_id="SO-1007")
    report = service.low_stock(threshold=50)
    assert report == [("BOLT-M8", "WH-01", 40)]
