using System;
using System.Collections.Generic;
using System.Linq;
using System.Security.Cryptography;
using System.Threading.Tasks;
using Microsoft.AspNetCore.Http;
using Microsoft.AspNetCore.Mvc;
using Microsoft.Extensions.Logging;

namespace Quillbrook.Lockers.Api
{
    /// <summary>A compartment in a parcel locker bank.</summary>
    public sealed record Compartment(int Number, CompartmentSize Size, string? ParcelId, DateTimeOffset? ReservedUntil);

    public enum CompartmentSize { Small, Medium, Large }

    public sealed record DepositRequest(string ParcelId, CompartmentSize Size, string RecipientPhone);

    public sealed record DepositResponse(int Compartment, string PickupCode, DateTimeOffset ExpiresAt);

    public interface ILockerBankStore
    {
        Task<IReadOnlyList<Compartment>> ListAsync(string bankId);
        Task<bool> TryReserveAsync(string bankId, int number, string parcelId, DateTimeOffset until);
        Task SavePickupCodeAsync(string bankId, int number, string codeHash);
    }

    [ApiController]
    [Route("api/v2/banks/{bankId}/deposits")]
    public class ParcelLockerController : ControllerBase
    {
        private static readonly TimeSpan HoldPeriod = TimeSpan.FromHours(72);
        private readonly ILockerBankStore _store;
        private readonly ILogger<ParcelLockerController> _log;
        private readonly TimeProvider _clock;

        public ParcelLockerController(ILockerBankStore store, ILogger<ParcelLockerController> log, TimeProvider clock)
        {
            _store = store;
            _log = log;
            _clock = clock;
        }

        /// <summary>
        /// Reserves the smallest free compartment that fits the parcel and
        /// returns a six-digit pickup code; only its hash is stored.
        /// </summary>
        [HttpPost]
        [ProducesResponseType(typeof(DepositResponse), StatusCodes.Status201Created)]
        [ProducesResponseType(StatusCodes.Status409Conflict)]
        public async Task<IActionResult> Deposit(string bankId, [FromBody] DepositRequest request)
        {
            if (string.IsNullOrWhiteSpace(request.ParcelId))
            {
                return BadRequest(new { error = "parcelId is required" });
            }

            var now = _clock.GetUtcNow();
            var compartments = await _store.ListAsync(bankId);
            var candidates = compartments
                .Where(c => c.ParcelId is null && (c.ReservedUntil is null || c.ReservedUntil < now))
                .Where(c => c.Size >= request.Size)
                .OrderBy(c => c.Size)
                .ThenBy(c => c.Number);

            foreach (var candidate in candidates)
            {
                var until = now + HoldPeriod;
                if (!await _store.TryReserveAsync(bankId, candidate.Number, request.ParcelId, until))
                {
                    _log.LogDebug("Compartment {Number} in {Bank} taken concurrently, trying next", candidate.Number, bankId);
                    continue;
                }

                var code = RandomNumberGenerator.GetInt32(0, 1_000_000).ToString("D6");
                await _store.SavePickupCodeAsync(bankId, candidate.Number, Hash(code));
                _log.LogInformation("Parcel {Parcel} deposited in {Bank}/{Number}", request.ParcelId, bankId, candidate.Number);
                return Created($"/api/v2/banks/{bankId}/compartments/{candidate.Number}",
                    new DepositResponse(candidate.Number, code, until));
            }

            _log.LogWarning("No {Size} compartment free in {Bank}", request.Size, bankId);
            return Conflict(new { error = $"no free compartment of size {request.Size} or larger" });
        }

        private static string Hash(string code)
        {
            var bytes = SHA256.HashData(System.Text.Encoding.UTF8.GetBytes(code));
            return Convert.ToHexString(bytes).ToLowerInvariant();
        }
    }
}
