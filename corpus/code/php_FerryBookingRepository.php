<?php

declare(strict_types=1);

namespace Skerry\Ferries\Booking;

use DateTimeImmutable;
use PDO;
use PDOException;
use RuntimeException;

/**
 * Persists vehicle and foot-passenger bookings for the island ferry.
 *
 * A sailing has two capacities: deck metres for vehicles and seats for
 * passengers. A booking holds both at once, so the check and the insert run
 * in one transaction with the sailing row locked (SELECT ... FOR UPDATE);
 * without the lock two agents selling the last 4.5 m of deck at the same
 * moment both succeed, which is how the August double-booking happened.
 */
final class FerryBookingRepository
{
    private const VEHICLE_LENGTH_M = [
        'car' => 4.5,
        'van' => 6.0,
        'campervan' => 7.5,
        'motorbike' => 2.0,
        'bicycle' => 0.0,
    ];

    public function __construct(private readonly PDO $db)
    {
        $this->db->setAttribute(PDO::ATTR_ERRMODE, PDO::ERRMODE_EXCEPTION);
    }

    /**
     * @param list<string> $passengerNames
     * @throws SailingFullException when deck or seats would be exceeded
     */
    public function book(
        int $sailingId,
        string $customerEmail,
        array $passengerNames,
        ?string $vehicleType = null,
        ?string $registration = null,
    ): Booking {
        if ($passengerNames === []) {
            throw new \InvalidArgumentException('A booking needs at least one passenger.');
        }
        $deck = $vehicleType === null ? 0.0 : self::VEHICLE_LENGTH_M[$vehicleType]
            ?? throw new \InvalidArgumentException("Unknown vehicle type: {$vehicleType}");

        $this->db->beginTransaction();
        try {
            $sailing = $this->lockSailing($sailingId);
            $used = $this->usage($sailingId);

            if ($used['seats'] + count($passengerNames) > (int) $sailing['seat_capacity']) {
                throw new SailingFullException($sailingId, 'seats');
            }
            if ($used['deck'] + $deck > (float) $sailing['deck_capacity_m']) {
                throw new SailingFullException($sailingId, 'deck');
            }

            $reference = $this->newReference();
            $insert = $this->db->prepare(
                'INSERT INTO bookings (reference, sailing_id, customer_email, vehicle_type,
                                       registration, deck_m, created_at)
                 VALUES (:ref, :sailing, :email, :vtype, :reg, :deck, :created)'
            );
            $insert->execute([
                ':ref' => $reference,
                ':sailing' => $sailingId,
                ':email' => strtolower(trim($customerEmail)),
                ':vtype' => $vehicleType,
                ':reg' => $registration === null ? null : strtoupper(str_replace(' ', '', $registration)),
                ':deck' => $deck,
                ':created' => (new DateTimeImmutable())->format('Y-m-d H:i:s'),
            ]);
            $bookingId = (int) $this->db->lastInsertId();

            $passenger = $this->db->prepare(
                'INSERT INTO booking_passengers (booking_id, full_name, seat_no) VALUES (?, ?, ?)'
            );
            foreach (array_values($passengerNames) as $i => $name) {
                $passenger->execute([$bookingId, $name, $used['seats'] + $i + 1]);
            }

            $this->db->commit();
        } catch (\Throwable $e) {
            $this->db->rollBack();
            throw $e;
        }

        return new Booking($bookingId, $reference, $sailingId, $vehicleType, $deck, $passengerNames);
    }

    public function cancel(string $reference): bool
    {
        $stmt = $this->db->prepare(
            'UPDATE bookings SET cancelled_at = NOW() WHERE reference = ? AND cancelled_at IS NULL'
        );
        $stmt->execute([$reference]);
        return $stmt->rowCount() === 1;
    }

    /** @return array{seats: int, deck: float} */
    private function usage(int $sailingId): array
    {
        $stmt = $this->db->prepare(
            'SELECT COALESCE(SUM(b.deck_m), 0) AS deck,
                    (SELECT COUNT(*) FROM booking_passengers p
                       JOIN bookings b2 ON b2.id = p.booking_id
                      WHERE b2.sailing_id = :s1 AND b2.cancelled_at IS NULL) AS seats
               FROM bookings b
              WHERE b.sailing_id = :s2 AND b.cancelled_at IS NULL'
        );
        $stmt->execute([':s1' => $sailingId, ':s2' => $sailingId]);
        $row = $stmt->fetch(PDO::FETCH_ASSOC) ?: ['deck' => 0, 'seats' => 0];
        return ['seats' => (int) $row['seats'], 'deck' => (float) $row['deck']];
    }

    /** @return array<string, mixed> */
    private function lockSailing(int $sailingId): array
    {
        $stmt = $this->db->prepare(
            'SELECT id, departs_at, seat_capacity, deck_capacity_m, status
               FROM sailings WHERE id = ? FOR UPDATE'
        );
        $stmt->execute([$sailingId]);
        $row = $stmt->fetch(PDO::FETCH_ASSOC);
        if ($row === false) {
            throw new RuntimeException("Sailing {$sailingId} does not exist.");
        }
        if ($row['status'] !== 'scheduled') {
            throw new RuntimeException("Sailing {$sailingId} is {$row['status']}.");
        }
        return $row;
    }

    private function newReference(): string
    {
        // No 0/O or 1/I: references are read out over the phone.
        $alphabet = 'ABCDEFGHJKLMNPQRSTUVWXYZ23456789';
        $ref = 'SK';
        for ($i = 0; $i < 6; $i++) {
            $ref .= $alphabet[random_int(0, strlen($alphabet) - 1)];
        }
        return $ref;
    }
}

final class SailingFullException extends RuntimeException
{
    public function __construct(public readonly int $sailingId, public readonly string $resource)
    {
        parent::__construct("Sailing {$sailingId} has no {$resource} left.");
    }
}

final class Booking
{
    /** @param list<string> $passengers */
    public function __construct(
        public readonly int $id,
        public readonly string $reference,
        public readonly int $sailingId,
        public readonly ?string $vehicleType,
        public readonly float $deckMetres,
        public readonly array $passengers,
    ) {
    }
}
