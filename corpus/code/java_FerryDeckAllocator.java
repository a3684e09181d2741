package net.islandlines.booking.deck;

import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.EnumMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.logging.Logger;

/**
 * Allocates vehicle lanes on the car deck of a ro-ro ferry.
 *
 * <p>The deck is a set of parallel lanes of fixed length. Each vehicle is
 * driven on in loading order and must fit in one lane behind the vehicles
 * already there, with a gap between bumpers. Tall vehicles (vans over 2.1 m,
 * coaches, lorries) may only use the centre lanes, where the deck has full
 * headroom; the side lanes run under the mezzanine.
 *
 * <p>The allocator is greedy on purpose: loading crews need a lane number the
 * moment a vehicle reaches the ramp, not an optimal plan after the last one.
 */
public final class FerryDeckAllocator {

    private static final Logger LOG = Logger.getLogger(FerryDeckAllocator.class.getName());

    /** Gap kept between two vehicles in a lane, in centimetres. */
    static final int BUMPER_GAP_CM = 40;

    /** Vehicles above this height need a full-headroom lane. */
    static final int LOW_DECK_MAX_HEIGHT_CM = 210;

    public enum Category { CAR, VAN, CAMPER, COACH, LORRY, MOTORCYCLE }

    /** One vehicle as checked in at the booth. */
    public record Vehicle(String plate, Category category, int lengthCm, int heightCm, boolean disembarkFirst) {
        public Vehicle {
            Objects.requireNonNull(plate, "plate");
            Objects.requireNonNull(category, "category");
            if (lengthCm <= 0 || heightCm <= 0) {
                throw new IllegalArgumentException("bad dimensions for " + plate);
            }
        }

        boolean isTall() {
            return heightCm > LOW_DECK_MAX_HEIGHT_CM;
        }
    }

    /** A lane and what has been loaded into it so far. */
    static final class Lane {
        final int number;
        final int lengthCm;
        final boolean fullHeadroom;
        final boolean nearBowDoor;
        final List<Vehicle> vehicles = new ArrayList<>();
        int usedCm;

        Lane(int number, int lengthCm, boolean fullHeadroom, boolean nearBowDoor) {
            this.number = number;
            this.lengthCm = lengthCm;
            this.fullHeadroom = fullHeadroom;
            this.nearBowDoor = nearBowDoor;
        }

        int freeCm() {
            return lengthCm - usedCm;
        }

        /** Space the vehicle takes, counting the gap to the one in front. */
        int needFor(Vehicle v) {
            return vehicles.isEmpty() ? v.lengthCm() : v.lengthCm() + BUMPER_GAP_CM;
        }

        boolean fits(Vehicle v) {
            if (v.isTall() && !fullHeadroom) {
                return false;
            }
            return needFor(v) <= freeCm();
        }

        void load(Vehicle v) {
            usedCm += needFor(v);
            vehicles.add(v);
        }
    }

    /** Where a vehicle went, or why it did not. */
    public sealed interface Placement permits Placed, Refused {}

    public record Placed(String plate, int lane, int positionInLane) implements Placement {}

    public record Refused(String plate, String reason) implements Placement {}

    private final List<Lane> lanes;
    private final Map<Category, Integer> countByCategory = new EnumMap<>(Category.class);
    private final Instant opened;

    public FerryDeckAllocator(List<Lane> lanes, Instant opened) {
        if (lanes.isEmpty()) {
            throw new IllegalArgumentException("a deck needs at least one lane");
        }
        this.lanes = List.copyOf(lanes);
        this.opened = opened;
    }

    /**
     * Picks a lane for the vehicle and loads it there.
     *
     * <p>Order of preference: a vehicle flagged to disembark first (medical,
     * livestock, a connecting coach) goes to a lane near the bow door. Tall
     * vehicles go to the fullest centre lane they fit in, keeping the other
     * centre lanes free for later lorries. Everything else takes the fullest
     * low lane it fits in, and only spills into centre lanes when the low
     * lanes are full ("best fit" keeps long gaps available).
     */
    public Placement place(Vehicle v) {
        Optional<Lane> lane = choose(v);
        if (lane.isEmpty()) {
            LOG.info(() -> "refused " + v.plate() + " (" + v.category() + ", " + v.lengthCm() + " cm)");
            return new Refused(v.plate(), v.isTall() ? "no centre lane has room" : "deck full");
        }
        Lane l = lane.get();
        l.load(v);
        countByCategory.merge(v.category(), 1, Integer::sum);
        return new Placed(v.plate(), l.number, l.vehicles.size());
    }

    private Optional<Lane> choose(Vehicle v) {
        Comparator<Lane> fullestFirst = Comparator.comparingInt(Lane::freeCm);

        if (v.disembarkFirst()) {
            Optional<Lane> bow = lanes.stream()
                    .filter(l -> l.nearBowDoor && l.fits(v))
                    .min(fullestFirst);
            if (bow.isPresent()) {
                return bow;
            }
            // No bow lane left: fall through and load it like any other vehicle.
        }

        if (v.isTall()) {
            return lanes.stream().filter(l -> l.fullHeadroom && l.fits(v)).min(fullestFirst);
        }

        Optional<Lane> low = lanes.stream()
                .filter(l -> !l.fullHeadroom && l.fits(v))
                .min(fullestFirst);
        return low.or(() -> lanes.stream().filter(l -> l.fits(v)).min(fullestFirst));
    }

    /** Metres of lane still free, summed over the deck, for the booth display. */
    public double freeMetres() {
        return lanes.stream().mapToInt(Lane::freeCm).sum() / 100.0;
    }

    /** Metres still free in full-headroom lanes only. */
    public double freeTallMetres() {
        return lanes.stream().filter(l -> l.fullHeadroom).mapToInt(Lane::freeCm).sum() / 100.0;
    }

    /** A one-line summary for the loading log. */
    public String summary(Instant now) {
        Duration open = Duration.between(opened, now);
        int total = countByCategory.values().stream().mapToInt(Integer::intValue).sum();
        return String.format(
                "%d vehicles in %d min; %.1f m free (%.1f m tall); %s",
                total, open.toMinutes(), freeMetres(), freeTallMetres(), countByCategory);
    }

    /** The standard deck of the MV Skerry Lass: 4 low side lanes, 3 centre lanes. */
    public static FerryDeckAllocator skerryLass(Instant opened) {
        List<Lane> lanes = List.of(
                new Lane(1, 5200, false, true),
                new Lane(2, 5800, false, false),
                new Lane(3, 6400, true, true),
                new Lane(4, 6400, true, false),
                new Lane(5, 6400, true, false),
                new Lane(6, 5800, false, false),
                new Lane(7, 5200, false, true));
        return new FerryDeckAllocator(lanes, opened);
    }
}
