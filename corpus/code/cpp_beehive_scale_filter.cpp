// beehive_scale_filter.cpp
//
// Smooths the raw load-cell readings of a hive scale and flags swarm events.
// A hive loses 1.5 to 3 kg within minutes when a swarm leaves; the same drop
// spread over a day is just foragers being out. The filter keeps a short
// median window against wind gusts, then an exponential average, and reports
// a swarm when the smoothed weight falls faster than `swarm_rate_kg_per_min`
// for at least `swarm_min_minutes`.
//
// Build: g++ -std=c++17 -O2 -Wall -Wextra beehive_scale_filter.cpp -o bsf
// Test:  ./bsf --self-test

#include <algorithm>
#include <array>
#include <cassert>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <deque>
#include <iomanip>
#include <iostream>
#include <optional>
#include <string>
#include <vector>

namespace apiary {

using Clock = std::chrono::system_clock;
using Minutes = std::chrono::minutes;

struct Reading {
    std::int64_t unix_seconds;
    double grams;          // raw, after tare
    double temperature_c;  // load cells drift with temperature
};

struct FilterConfig {
    std::size_t median_window = 5;
    double alpha = 0.25;                  // weight of the newest median
    double temp_coefficient_g_per_c = 11.0;
    double reference_temp_c = 20.0;
    double swarm_rate_kg_per_min = 0.12;
    int swarm_min_minutes = 6;
};

enum class EventKind { None, Swarm, Harvest, SensorFault };

struct Event {
    EventKind kind;
    std::int64_t started_at;
    double drop_kg;
};

class ScaleFilter {
public:
    explicit ScaleFilter(FilterConfig cfg) : cfg_(cfg) {}

    // Feeds one reading; returns an event when one has just ended.
    std::optional<Event> push(const Reading& r) {
        if (!std::isfinite(r.grams) || r.grams < 0.0 || r.grams > 250'000.0) {
            ++faults_;
            if (faults_ >= 3) {
                faults_ = 0;
                return Event{EventKind::SensorFault, r.unix_seconds, 0.0};
            }
            return std::nullopt;
        }
        faults_ = 0;

        const double compensated =
            r.grams - cfg_.temp_coefficient_g_per_c * (r.temperature_c - cfg_.reference_temp_c);
        window_.push_back(compensated);
        if (window_.size() > cfg_.median_window) window_.pop_front();

        const double med = median();
        const double previous = smoothed_.value_or(med);
        smoothed_ = cfg_.alpha * med + (1.0 - cfg_.alpha) * previous;

        return track_drop(r.unix_seconds, previous, *smoothed_);
    }

    double weight_kg() const { return smoothed_.value_or(0.0) / 1000.0; }

private:
    double median() const {
        std::vector<double> sorted(window_.begin(), window_.end());
        std::sort(sorted.begin(), sorted.end());
        const auto n = sorted.size();
        return n % 2 == 1 ? sorted[n / 2] : 0.5 * (sorted[n / 2 - 1] + sorted[n / 2]);
    }

    // Readings arrive once a minute, so the per-step change is a per-minute rate.
    std::optional<Event> track_drop(std::int64_t at, double before, double after) {
        const double rate_kg = (before - after) / 1000.0;
        if (rate_kg >= cfg_.swarm_rate_kg_per_min) {
            if (!drop_start_) {
                drop_start_ = at;
                drop_from_ = before;
            }
            ++drop_minutes_;
            return std::nullopt;
        }
        std::optional<Event> ended;
        if (drop_start_ && drop_minutes_ >= cfg_.swarm_min_minutes) {
            const double total = (*drop_from_ - after) / 1000.0;
            // More than 8 kg at once is the beekeeper taking off a super.
            const auto kind = total > 8.0 ? EventKind::Harvest : EventKind::Swarm;
            ended = Event{kind, *drop_start_, total};
        }
        drop_start_.reset();
        drop_from_.reset();
        drop_minutes_ = 0;
        return ended;
    }

    FilterConfig cfg_;
    std::deque<double> window_;
    std::optional<double> smoothed_;
    std::optional<std::int64_t> drop_start_;
    std::optional<double> drop_from_;
    int drop_minutes_ = 0;
    int faults_ = 0;
};

const char* to_string(EventKind k) {
    switch (k) {
        case EventKind::Swarm: return "swarm";
        case EventKind::Harvest: return "harvest";
        case EventKind::SensorFault: return "sensor-fault";
        case EventKind::None: break;
    }
    return "none";
}

}  // namespace apiary

// ---------------------------------------------------------------------------
// Self-test: synthetic day with a gusty morning, a swarm at 11:40 and a fault.

namespace {

std::vector<apiary::Reading> synthetic_day() {
    std::vector<apiary::Reading> out;
    const std::int64_t midnight = 1'751'328'000;
    double hive = 41'200.0;
    for (int minute = 0; minute < 24 * 60; ++minute) {
        const double temp = 14.0 + 9.0 * std::sin((minute - 480) / 1440.0 * 2 * M_PI);
        double g = hive;
        if (minute > 420 && minute < 600 && minute % 7 == 0) g += 900.0;  // gusts
        if (minute >= 700 && minute < 712) hive -= 220.0;                 // swarm leaves
        if (minute >= 1000 && minute < 1003) g = NAN;                     // loose cable
        g += 11.0 * (temp - 20.0);
        out.push_back({midnight + minute * 60, g, temp});
    }
    return out;
}

int self_test() {
    apiary::ScaleFilter f{apiary::FilterConfig{}};
    std::vector<apiary::Event> events;
    for (const auto& r : synthetic_day()) {
        if (auto e = f.push(r)) events.push_back(*e);
    }
    int swarms = 0, faults = 0, gust_alarms = 0;
    for (const auto& e : events) {
        if (e.kind == apiary::EventKind::Swarm) {
            ++swarms;
            assert(e.drop_kg > 1.5 && e.drop_kg < 3.5);
        }
        if (e.kind == apiary::EventKind::SensorFault) ++faults;
        if (e.started_at < 1'751'328'000 + 600 * 60 && e.kind != apiary::EventKind::SensorFault)
            ++gust_alarms;
    }
    assert(swarms == 1 && "exactly one swarm expected");
    assert(faults == 1 && "three NaN readings make one fault");
    assert(gust_alarms == 0 && "gusts must not look like swarms");
    std::cout << "self-test ok: " << events.size() << " events, final weight "
              << std::fixed << std::setprecision(2) << f.weight_kg() << " kg\n";
    return 0;
}

}  // namespace

int main(int argc, char** argv) {
    if (argc > 1 && std::string(argv[1]) == "--self-test") return self_test();

    // Production mode: "unix_seconds grams temperature" per line on stdin.
    apiary::ScaleFilter f{apiary::FilterConfig{}};
    apiary::Reading r{};
    while (std::cin >> r.unix_seconds >> r.grams >> r.temperature_c) {
        if (auto e = f.push(r)) {
            std::cout << r.unix_seconds << ' ' << apiary::to_string(e->kind) << ' '
                      << std::setprecision(3) << e->drop_kg << '\n';
        }
    }
    return 0;
}
