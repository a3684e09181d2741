// Departure board cache for the tram companion app.
//
// The stop screen polls the operator's realtime feed, which is slow and
// rate-limited (60 requests per minute per API key). This repository keeps
// the last good board per stop, coalesces concurrent requests for the same
// stop, and falls back to the timetable when the feed is down, marking the
// rows as "scheduled" so the UI can grey them out.

import 'dart:async';
import 'dart:convert';
import 'dart:math' as math;

import 'package:http/http.dart' as http;
import 'package:meta/meta.dart';

enum DepartureSource { realtime, scheduled }

@immutable
class Departure {
  const Departure({
    required this.line,
    required this.destination,
    required this.scheduled,
    this.expected,
    this.platform,
    this.source = DepartureSource.realtime,
    this.cancelled = false,
  });

  final String line;
  final String destination;
  final DateTime scheduled;
  final DateTime? expected;
  final String? platform;
  final DepartureSource source;
  final bool cancelled;

  Duration get delay =>
      expected == null ? Duration.zero : expected!.difference(scheduled);

  /// Minutes until departure as shown on the board: "now" under 45 s.
  String countdown(DateTime now) {
    final at = expected ?? scheduled;
    final seconds = at.difference(now).inSeconds;
    if (cancelled) return 'cancelled';
    if (seconds < 45) return 'now';
    return '${(seconds / 60).round()} min';
  }

  factory Departure.fromJson(Map<String, dynamic> json) {
    DateTime? parse(Object? v) =>
        v is String && v.isNotEmpty ? DateTime.parse(v).toUtc() : null;
    return Departure(
      line: json['line'] as String,
      destination: (json['headsign'] ?? json['destination']) as String,
      scheduled: parse(json['aimed'])!,
      expected: parse(json['expected']),
      platform: json['platform'] as String?,
      cancelled: json['status'] == 'CANCELLED',
    );
  }

  Departure asScheduled() => Departure(
        line: line,
        destination: destination,
        scheduled: scheduled,
        platform: platform,
        source: DepartureSource.scheduled,
      );
}

class Board {
  Board(this.stopId, this.departures, this.fetchedAt);

  final String stopId;
  final List<Departure> departures;
  final DateTime fetchedAt;

  bool isFresh(DateTime now, Duration maxAge) =>
      now.difference(fetchedAt) < maxAge;
}

abstract interface class TimetableStore {
  Future<List<Departure>> scheduledAt(String stopId, DateTime from, {int limit});
}

class FeedException implements Exception {
  FeedException(this.statusCode, this.message);
  final int statusCode;
  final String message;
  @override
  String toString() => 'FeedException($statusCode): $message';
}

class DepartureRepository {
  DepartureRepository({
    required http.Client client,
    required TimetableStore timetable,
    required String apiKey,
    Uri? baseUri,
    this.maxAge = const Duration(seconds: 20),
    DateTime Function()? clock,
  })  : _client = client,
        _timetable = timetable,
        _apiKey = apiKey,
        _base = baseUri ?? Uri.parse('https://rt.metrolink-feeds.example/v2/'),
        _clock = clock ?? DateTime.now;

  final http.Client _client;
  final TimetableStore _timetable;
  final String _apiKey;
  final Uri _base;
  final Duration maxAge;
  final DateTime Function() _clock;

  final Map<String, Board> _boards = {};
  final Map<String, Future<Board>> _inFlight = {};
  DateTime? _backoffUntil;
  int _failures = 0;

  /// Returns a board for [stopId], from cache if it is fresh enough.
  Future<Board> board(String stopId, {bool force = false}) {
    final now = _clock().toUtc();
    final cached = _boards[stopId];
    if (!force && cached != null && cached.isFresh(now, maxAge)) {
      return Future.value(cached);
    }
    return _inFlight.putIfAbsent(stopId, () async {
      try {
        final fresh = await _load(stopId, now);
        _boards[stopId] = fresh;
        return fresh;
      } finally {
        _inFlight.remove(stopId);
      }
    });
  }

  Future<Board> _load(String stopId, DateTime now) async {
    final backoff = _backoffUntil;
    if (backoff != null && now.isBefore(backoff)) {
      return _fallback(stopId, now);
    }
    try {
      final departures = await _fetchRealtime(stopId);
      _failures = 0;
      _backoffUntil = null;
      departures.sort((a, b) =>
          (a.expected ?? a.scheduled).compareTo(b.expected ?? b.scheduled));
      return Board(stopId, departures, now);
    } on FeedException catch (e) {
      _failures++;
      final retryAfter = e.statusCode == 429
          ? const Duration(seconds: 60)
          : Duration(seconds: math.min(300, 5 * math.pow(2, _failures).toInt()));
      _backoffUntil = now.add(retryAfter);
      return _fallback(stopId, now);
    } on TimeoutException {
      _failures++;
      _backoffUntil = now.add(const Duration(seconds: 15));
      return _fallback(stopId, now);
    }
  }

  Future<List<Departure>> _fetchRealtime(String stopId) async {
    final uri = _base.resolve('stops/${Uri.encodeComponent(stopId)}/departures')
        .replace(queryParameters: {'limit': '12', 'include': 'platform'});
    final response = await _client
        .get(uri, headers: {'Authorization': 'Bearer $_apiKey', 'Accept': 'application/json'})
        .timeout(const Duration(seconds: 6));
    if (response.statusCode != 200) {
      throw FeedException(response.statusCode, response.reasonPhrase ?? 'error');
    }
    final body = jsonDecode(utf8.decode(response.bodyBytes)) as Map<String, dynamic>;
    final rows = (body['departures'] as List<dynamic>? ?? const [])
        .cast<Map<String, dynamic>>();
    return [for (final row in rows) Departure.fromJson(row)];
  }

  Future<Board> _fallback(String stopId, DateTime now) async {
    final last = _boards[stopId];
    // A realtime board up to two minutes old beats the timetable.
    if (last != null && now.difference(last.fetchedAt) < const Duration(minutes: 2)) {
      final stillAhead = last.departures
          .where((d) => (d.expected ?? d.scheduled).isAfter(now))
          .toList();
      if (stillAhead.length >= 3) return Board(stopId, stillAhead, last.fetchedAt);
    }
    final scheduled = await _timetable.scheduledAt(stopId, now, limit: 12);
    return Board(stopId, [for (final d in scheduled) d.asScheduled()], now);
  }

  void clear() {
    _boards.clear();
    _backoffUntil = null;
    _failures = 0;
  }
}
