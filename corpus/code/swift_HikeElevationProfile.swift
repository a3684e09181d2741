//
//  HikeElevationProfile.swift
//  Trailmark
//
//  Turns a recorded track into the numbers shown on the hike summary card:
//  distance, ascent, descent, highest point and a downsampled profile for the
//  chart. Barometric altitude jitters by a metre or two between samples, so
//  ascent is counted with a hysteresis threshold instead of summing every
//  positive step (which roughly doubles the real figure on a flat walk).
//

import Foundation
import CoreLocation

public struct TrackPoint: Equatable, Sendable {
    public let latitude: Double
    public let longitude: Double
    public let altitude: Double      // metres above sea level
    public let timestamp: Date

    public init(latitude: Double, longitude: Double, altitude: Double, timestamp: Date) {
        self.latitude = latitude
        self.longitude = longitude
        self.altitude = altitude
        self.timestamp = timestamp
    }
}

public struct ElevationSummary: Equatable, Sendable {
    public var distanceMetres: Double
    public var ascentMetres: Double
    public var descentMetres: Double
    public var highest: TrackPoint?
    public var movingTime: TimeInterval
    /// (distance along the track, altitude) pairs, at most `maxProfilePoints`.
    public var profile: [(Double, Double)]

    public static func == (lhs: ElevationSummary, rhs: ElevationSummary) -> Bool {
        lhs.distanceMetres == rhs.distanceMetres
            && lhs.ascentMetres == rhs.ascentMetres
            && lhs.descentMetres == rhs.descentMetres
            && lhs.highest == rhs.highest
            && lhs.movingTime == rhs.movingTime
            && lhs.profile.elementsEqual(rhs.profile, by: { $0 == $1 })
    }
}

public enum ProfileError: Error, LocalizedError {
    case tooFewPoints(Int)
    case timestampsOutOfOrder(index: Int)

    public var errorDescription: String? {
        switch self {
        case .tooFewPoints(let n):
            return "A profile needs at least two points; the track has \(n)."
        case .timestampsOutOfOrder(let index):
            return "Point \(index) is earlier than the point before it."
        }
    }
}

public struct ElevationProfiler {
    public var hysteresisMetres: Double = 3.0
    /// Below this speed (m/s) a segment counts as a rest, not moving time.
    public var restSpeed: Double = 0.3
    public var maxProfilePoints: Int = 200

    public init() {}

    public func summarize(_ points: [TrackPoint]) throws -> ElevationSummary {
        guard points.count >= 2 else { throw ProfileError.tooFewPoints(points.count) }

        var distance = 0.0
        var moving: TimeInterval = 0
        var cumulative: [Double] = [0]
        cumulative.reserveCapacity(points.count)

        for i in 1..<points.count {
            let a = points[i - 1], b = points[i]
            let dt = b.timestamp.timeIntervalSince(a.timestamp)
            guard dt >= 0 else { throw ProfileError.timestampsOutOfOrder(index: i) }
            let step = Self.haversine(a, b)
            distance += step
            cumulative.append(distance)
            if dt > 0, step / dt >= restSpeed { moving += dt }
        }

        let (up, down) = climb(points.map(\.altitude))
        let highest = points.max(by: { $0.altitude < $1.altitude })

        return ElevationSummary(
            distanceMetres: distance,
            ascentMetres: up,
            descentMetres: down,
            highest: highest,
            movingTime: moving,
            profile: downsample(zip(cumulative, points.map(\.altitude)).map { ($0, $1) })
        )
    }

    /// Counts a climb only once the altitude has moved `hysteresisMetres`
    /// away from the last reference level.
    func climb(_ altitudes: [Double]) -> (Double, Double) {
        guard var reference = altitudes.first else { return (0, 0) }
        var up = 0.0, down = 0.0
        for alt in altitudes.dropFirst() {
            let delta = alt - reference
            if delta >= hysteresisMetres {
                up += delta
                reference = alt
            } else if -delta >= hysteresisMetres {
                down += -delta
                reference = alt
            }
        }
        return (up, down)
    }

    /// Keeps every n-th point plus the last one, so the chart ends at the summit
    /// hut rather than a few metres before it.
    func downsample(_ series: [(Double, Double)]) -> [(Double, Double)] {
        guard series.count > maxProfilePoints, maxProfilePoints >= 2 else { return series }
        let stride = Double(series.count - 1) / Double(maxProfilePoints - 1)
        return (0..<maxProfilePoints).map { series[Int((Double($0) * stride).rounded())] }
    }

    static func haversine(_ a: TrackPoint, _ b: TrackPoint) -> Double {
        let r = 6_371_008.8
        let φ1 = a.latitude * .pi / 180, φ2 = b.latitude * .pi / 180
        let dφ = φ2 - φ1
        let dλ = (b.longitude - a.longitude) * .pi / 180
        let h = sin(dφ / 2) * sin(dφ / 2) + cos(φ1) * cos(φ2) * sin(dλ / 2) * sin(dλ / 2)
        return 2 * r * asin(min(1, sqrt(h)))
    }
}

// MARK: - Tests

#if canImport(XCTest)
import XCTest

final class ElevationProfilerTests: XCTestCase {
    private let start = Date(timeIntervalSince1970: 1_720_000_000)

    private func point(_ lat: Double, _ lon: Double, _ alt: Double, _ seconds: Double) -> TrackPoint {
        TrackPoint(latitude: lat, longitude: lon, altitude: alt, timestamp: start.addingTimeInterval(seconds))
    }

    func testJitterDoesNotCountAsAscent() throws {
        let wobble: [Double] = [410, 411.5, 409.8, 411.9, 410.2, 411.1, 409.9]
        let track = wobble.enumerated().map { point(46.55 + Double($0.offset) * 0.0002, 8.01, $0.element, Double($0.offset) * 30) }
        let summary = try ElevationProfiler().summarize(track)
        XCTAssertEqual(summary.ascentMetres, 0)
        XCTAssertEqual(summary.descentMetres, 0)
    }

    func testSteadyClimbIsCounted() throws {
        let track = (0...20).map { point(46.55 + Double($0) * 0.0005, 8.01, 1_200 + Double($0) * 10, Double($0) * 60) }
        let summary = try ElevationProfiler().summarize(track)
        XCTAssertEqual(summary.ascentMetres, 200, accuracy: 0.001)
        XCTAssertEqual(summary.highest?.altitude, 1_400)
        XCTAssertEqual(summary.distanceMetres, 1_111.9, accuracy: 1.0)
    }

    func testRestIsNotMovingTime() throws {
        let track = [point(46.5, 8.0, 900, 0), point(46.5009, 8.0, 905, 600), point(46.5009, 8.0, 905, 1_800)]
        let summary = try ElevationProfiler().summarize(track)
        XCTAssertEqual(summary.movingTime, 0, "100 m in 10 min is below the rest speed")
    }

    func testOutOfOrderTimestampsThrow() {
        let track = [point(46.5, 8.0, 900, 60), point(46.51, 8.0, 910, 0)]
        XCTAssertThrowsError(try ElevationProfiler().summarize(track)) { error in
            XCTAssertEqual(error.localizedDescription, "Point 1 is earlier than the point before it.")
        }
    }

    func testDownsampleKeepsLastPoint() {
        var profiler = ElevationProfiler()
        profiler.maxProfilePoints = 5
        let series = (0..<101).map { (Double($0), Double($0) * 2) }
        let out = profiler.downsample(series)
        XCTAssertEqual(out.count, 5)
        XCTAssertEqual(out.last?.0, 100)
    }
}
#endif
