//! Decoder for the frames the soil-moisture probes send over LoRa.
//!
//! Frame layout (little endian):
//!   0      u8   magic 0xA7
//!   1      u4   version (high nibble), u4 flags (low nibble)
//!   2..5   u32  probe id
//!   6..7   u16  sequence number, wraps
//!   8      u8   reading count n (1..8)
//!   9..    n * 5 bytes: u8 depth_cm, u16 moisture (0.01 %), i16 temp (0.01 degC)
//!   end-2  u16  CRC-16/CCITT-FALSE over everything before it
//!
//! Flag bit 0 means "battery low", bit 1 "clock not synced".

const std = @import("std");
const mem = std.mem;
const testing = std.testing;

pub const magic: u8 = 0xA7;
pub const max_readings = 8;
const header_len = 9;
const reading_len = 5;

pub const DecodeError = error{
    TooShort,
    BadMagic,
    UnsupportedVersion,
    BadCount,
    LengthMismatch,
    BadCrc,
    ValueOutOfRange,
};

pub const Reading = struct {
    depth_cm: u8,
    /// volumetric water content in hundredths of a percent
    moisture: u16,
    /// temperature in hundredths of a degree Celsius
    temp_centi: i16,

    pub fn moisturePercent(self: Reading) f32 {
        return @as(f32, @floatFromInt(self.moisture)) / 100.0;
    }

    pub fn tempCelsius(self: Reading) f32 {
        return @as(f32, @floatFromInt(self.temp_centi)) / 100.0;
    }
};

pub const Frame = struct {
    version: u4,
    battery_low: bool,
    clock_unsynced: bool,
    probe_id: u32,
    seq: u16,
    readings: std.BoundedArray(Reading, max_readings),
};

pub fn crc16(data: []const u8) u16 {
    var crc: u16 = 0xFFFF;
    for (data) |byte| {
        crc ^= @as(u16, byte) << 8;
        var i: u4 = 0;
        while (i < 8) : (i += 1) {
            if (crc & 0x8000 != 0) {
                crc = (crc << 1) ^ 0x1021;
            } else {
                crc <<= 1;
            }
        }
    }
    return crc;
}

pub fn decode(buf: []const u8) DecodeError!Frame {
    if (buf.len < header_len + reading_len + 2) return error.TooShort;
    if (buf[0] != magic) return error.BadMagic;

    const version: u4 = @truncate(buf[1] >> 4);
    if (version != 2 and version != 3) return error.UnsupportedVersion;
    const flags: u4 = @truncate(buf[1]);

    const count = buf[8];
    if (count == 0 or count > max_readings) return error.BadCount;
    const expected_len = header_len + @as(usize, count) * reading_len + 2;
    if (buf.len != expected_len) return error.LengthMismatch;

    const body = buf[0 .. buf.len - 2];
    const got_crc = mem.readInt(u16, buf[buf.len - 2 ..][0..2], .little);
    if (crc16(body) != got_crc) return error.BadCrc;

    var frame = Frame{
        .version = version,
        .battery_low = flags & 0b0001 != 0,
        .clock_unsynced = flags & 0b0010 != 0,
        .probe_id = mem.readInt(u32, buf[2..6], .little),
        .seq = mem.readInt(u16, buf[6..8], .little),
        .readings = .{},
    };

    var off: usize = header_len;
    var i: u8 = 0;
    while (i < count) : (i += 1) {
        const r = Reading{
            .depth_cm = buf[off],
            .moisture = mem.readInt(u16, buf[off + 1 ..][0..2], .little),
            .temp_centi = mem.readInt(i16, buf[off + 3 ..][0..2], .little),
        };
        // 100 % water content or soil colder than -40 degC means a broken sensor
        if (r.moisture > 10_000 or r.temp_centi < -4_000 or r.temp_centi > 8_500) {
            return error.ValueOutOfRange;
        }
        frame.readings.appendAssumeCapacity(r);
        off += reading_len;
    }
    return frame;
}

/// Tracks the last sequence number per probe to spot lost and repeated frames.
pub const SeqTracker = struct {
    last: std.AutoHashMap(u32, u16),
    lost: u64 = 0,
    duplicates: u64 = 0,

    pub fn init(allocator: mem.Allocator) SeqTracker {
        return .{ .last = std.AutoHashMap(u32, u16).init(allocator) };
    }

    pub fn deinit(self: *SeqTracker) void {
        self.last.deinit();
    }

    /// Returns false if the frame is a duplicate and should be dropped.
    pub fn accept(self: *SeqTracker, probe_id: u32, seq: u16) !bool {
        const entry = try self.last.getOrPut(probe_id);
        if (!entry.found_existing) {
            entry.value_ptr.* = seq;
            return true;
        }
        const gap = seq -% entry.value_ptr.*;
        if (gap == 0 or gap > 0x8000) {
            self.duplicates += 1;
            return false;
        }
        self.lost += gap - 1;
        entry.value_ptr.* = seq;
        return true;
    }
};

fn buildFrame(out: []u8, probe: u32, seq: u16, readings: []const Reading) []u8 {
    out[0] = magic;
    out[1] = (3 << 4) | 0b0001;
    mem.writeInt(u32, out[2..6], probe, .little);
    mem.writeInt(u16, out[6..8], seq, .little);
    out[8] = @intCast(readings.len);
    var off: usize = header_len;
    for (readings) |r| {
        out[off] = r.depth_cm;
        mem.writeInt(u16, out[off + 1 ..][0..2], r.moisture, .little);
        mem.writeInt(i16, out[off + 3 ..][0..2], r.temp_centi, .little);
        off += reading_len;
    }
    mem.writeInt(u16, out[off..][0..2], crc16(out[0..off]), .little);
    return out[0 .. off + 2];
}

test "crc16 check value" {
    try testing.expectEqual(@as(u16, 0x29B1), crc16("123456789"));
}

test "decode round trip" {
    var buf: [64]u8 = undefined;
    const rs = [_]Reading{
        .{ .depth_cm = 10, .moisture = 3142, .temp_centi = 1275 },
        .{ .depth_cm = 30, .moisture = 2890, .temp_centi = 1102 },
        .{ .depth_cm = 60, .moisture = 3577, .temp_centi = 968 },
    };
    const frame_bytes = buildFrame(&buf, 0x00C0FFEE, 65534, &rs);
    const f = try decode(frame_bytes);
    try testing.expectEqual(@as(u32, 0x00C0FFEE), f.probe_id);
    try testing.expect(f.battery_low);
    try testing.expect(!f.clock_unsynced);
    try testing.expectEqual(@as(usize, 3), f.readings.len);
    try testing.expectApproxEqAbs(@as(f32, 31.42), f.readings.get(0).moisturePercent(), 0.001);
}

test "corrupted byte fails the crc" {
    var buf: [64]u8 = undefined;
    const rs = [_]Reading{.{ .depth_cm = 15, .moisture = 2000, .temp_centi = -150 }};
    const frame_bytes = buildFrame(&buf, 7, 1, &rs);
    frame_bytes[10] ^= 0x40;
    try testing.expectError(error.BadCrc, decode(frame_bytes));
}

test "sequence tracker counts gaps across wraparound" {
    var t = SeqTracker.init(testing.allocator);
    defer t.deinit();
    try testing.expect(try t.accept(42, 65533));
    try testing.expect(try t.accept(42, 1)); // 65534, 65535, 0 lost
    try testing.expect(!try t.accept(42, 1));
    try testing.expectEqual(@as(u64, 3), t.lost);
    try testing.expectEqual(@as(u64, 1), t.duplicates);
}
