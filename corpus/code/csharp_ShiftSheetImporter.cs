using System;
using System.Collections.Generic;
using System.Globalization;
using System.IO;
using System.Linq;
using System.Text;
using System.Threading;
using System.Threading.Tasks;
using Microsoft.Extensions.Logging;

namespace Harbourside.Volunteers.Import;

/// <summary>
/// Imports the weekly sign-in sheets of the food bank's volunteer shifts,
/// exported from the tablet at the door as semicolon-separated text.
/// </summary>
/// <remarks>
/// The tablet app has changed its export three times; the importer accepts
/// every version it has seen. Rows it cannot read are reported, not fatal:
/// a coordinator fixes them by hand on Monday.
/// </remarks>
public sealed class ShiftSheetImporter
{
    private static readonly string[] DateFormats = { "yyyy-MM-dd", "dd/MM/yyyy", "d.M.yyyy" };
    private static readonly string[] TimeFormats = { "HH:mm", "H:mm", "HHmm" };

    private readonly IVolunteerDirectory _directory;
    private readonly ILogger<ShiftSheetImporter> _logger;

    public ShiftSheetImporter(IVolunteerDirectory directory, ILogger<ShiftSheetImporter> logger)
    {
        _directory = directory ?? throw new ArgumentNullException(nameof(directory));
        _logger = logger;
    }

    /// <summary>One volunteer's attendance at one shift.</summary>
    public sealed record Attendance(
        int VolunteerId,
        DateOnly Date,
        TimeOnly SignedIn,
        TimeOnly? SignedOut,
        string Role)
    {
        /// <summary>Hours worked, rounded down to the quarter hour; null if no sign-out.</summary>
        public decimal? Hours => SignedOut is { } outAt && outAt > SignedIn
            ? Math.Floor((decimal)(outAt - SignedIn).TotalMinutes / 15m) / 4m
            : null;
    }

    /// <summary>A row the importer could not use, with the reason.</summary>
    public sealed record Rejected(int LineNumber, string Line, string Reason);

    public sealed record Result(IReadOnlyList<Attendance> Rows, IReadOnlyList<Rejected> Rejected)
    {
        public decimal TotalHours => Rows.Sum(r => r.Hours ?? 0m);
    }

    /// <summary>Reads one exported sheet.</summary>
    public async Task<Result> ImportAsync(TextReader reader, CancellationToken ct = default)
    {
        var rows = new List<Attendance>();
        var rejected = new List<Rejected>();
        var seen = new HashSet<(int, DateOnly, TimeOnly)>();

        string? header = await reader.ReadLineAsync(ct);
        if (header is null)
        {
            return new Result(rows, rejected);
        }
        var columns = ColumnMap.FromHeader(header);

        int lineNumber = 1;
        string? line;
        while ((line = await reader.ReadLineAsync(ct)) is not null)
        {
            lineNumber++;
            if (string.IsNullOrWhiteSpace(line) || line.StartsWith('#'))
            {
                continue;
            }

            var fields = line.Split(';');
            if (!TryParseRow(fields, columns, out var row, out var reason))
            {
                rejected.Add(new Rejected(lineNumber, line, reason));
                continue;
            }

            // The tablet sometimes double-submits when the Wi-Fi drops.
            if (!seen.Add((row.VolunteerId, row.Date, row.SignedIn)))
            {
                _logger.LogDebug("Duplicate row {Line} skipped", lineNumber);
                continue;
            }
            rows.Add(row);
        }

        _logger.LogInformation(
            "Imported {Count} rows ({Hours} h), rejected {Rejected}",
            rows.Count, rows.Sum(r => r.Hours ?? 0m), rejected.Count);
        return new Result(rows, rejected);
    }

    private bool TryParseRow(string[] f, ColumnMap c, out Attendance row, out string reason)
    {
        row = null!;
        reason = "";

        string Get(int index) => index >= 0 && index < f.Length ? f[index].Trim() : "";

        if (!DateOnly.TryParseExact(Get(c.Date), DateFormats, CultureInfo.InvariantCulture,
                DateTimeStyles.None, out var date))
        {
            reason = $"unreadable date '{Get(c.Date)}'";
            return false;
        }
        if (!TimeOnly.TryParseExact(Get(c.In), TimeFormats, CultureInfo.InvariantCulture,
                DateTimeStyles.None, out var signedIn))
        {
            reason = $"unreadable sign-in time '{Get(c.In)}'";
            return false;
        }

        TimeOnly? signedOut = null;
        var outText = Get(c.Out);
        if (outText.Length > 0)
        {
            if (!TimeOnly.TryParseExact(outText, TimeFormats, CultureInfo.InvariantCulture,
                    DateTimeStyles.None, out var o))
            {
                reason = $"unreadable sign-out time '{outText}'";
                return false;
            }
            signedOut = o;
        }

        // Older exports carry the volunteer's name only; newer ones the badge number.
        int? id = c.Badge >= 0 && int.TryParse(Get(c.Badge), out var badge)
            ? _directory.FindByBadge(badge)
            : _directory.FindByName(Get(c.Name));
        if (id is null)
        {
            reason = $"unknown volunteer '{(c.Badge >= 0 ? Get(c.Badge) : Get(c.Name))}'";
            return false;
        }

        var role = Get(c.Role);
        row = new Attendance(id.Value, date, signedIn, signedOut, role.Length == 0 ? "general" : role.ToLowerInvariant());
        return true;
    }

    /// <summary>Column positions, found by header name so column order may change.</summary>
    private sealed record ColumnMap(int Date, int Name, int Badge, int In, int Out, int Role)
    {
        public static ColumnMap FromHeader(string header)
        {
            var names = header.Split(';').Select(h => h.Trim().ToLowerInvariant()).ToList();
            int Find(params string[] aliases) => names.FindIndex(aliases.Contains);

            var map = new ColumnMap(
                Date: Find("date", "datum", "shift date"),
                Name: Find("name", "volunteer"),
                Badge: Find("badge", "badge no", "badge_number"),
                In: Find("in", "sign in", "time in"),
                Out: Find("out", "sign out", "time out"),
                Role: Find("role", "task"));

            if (map.Date < 0 || map.In < 0 || (map.Name < 0 && map.Badge < 0))
            {
                throw new InvalidDataException($"Header lacks date, sign-in or volunteer column: {header}");
            }
            return map;
        }
    }

    /// <summary>Writes the rejected rows as a small report for the coordinator.</summary>
    public static string FormatRejected(IEnumerable<Rejected> rejected)
    {
        var sb = new StringBuilder();
        foreach (var r in rejected.OrderBy(r => r.LineNumber))
        {
            sb.Append(CultureInfo.InvariantCulture, $"line {r.LineNumber,4}: {r.Reason}")
              .AppendLine()
              .Append("           ").AppendLine(r.Line);
        }
        return sb.ToString();
    }
}

/// <summary>Looks volunteers up in the membership database.</summary>
public interface IVolunteerDirectory
{
    int? FindByBadge(int badge);
    int? FindByName(string fullName);
}
