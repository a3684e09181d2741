package council.parking.permits

import java.time.{Clock, Duration, LocalDate, LocalTime, ZonedDateTime}
import scala.util.{Failure, Success, Try}

/** Eligibility and pricing of residents' parking permits.
  *
  * The council's rules, as amended in the 2026 traffic order:
  *   - one permit per vehicle, at most two per household (three in zone K,
  *     which has no off-street parking at all);
  *   - price depends on the vehicle's CO2 band and on how many permits the
  *     household already holds;
  *   - blue badge holders pay nothing and are not counted against the cap;
  *   - visitor vouchers come in books of ten half-day vouchers, at most
  *     twelve books per household and year.
  */
enum Co2Band(val maxGramsPerKm: Int, val annualPence: Int):
  case A extends Co2Band(0, 2500)
  case B extends Co2Band(110, 9000)
  case C extends Co2Band(150, 14500)
  case D extends Co2Band(185, 21000)
  case E extends Co2Band(Int.MaxValue, 29500)

object Co2Band:
  def of(gramsPerKm: Int): Co2Band =
    Co2Band.values.find(b => gramsPerKm <= b.maxGramsPerKm).getOrElse(E)

final case class Vehicle(registration: String, co2GramsPerKm: Option[Int], registeredOn: LocalDate, electric: Boolean):
  /** Vehicles without a CO2 figure (registered before March 2001) are banded by engine size upstream;
    * here we only see the result, or nothing, in which case band D applies. */
  def band: Co2Band =
    if electric then Co2Band.A
    else co2GramsPerKm.map(Co2Band.of).getOrElse(Co2Band.D)

final case class Household(id: String, zone: String, address: String, permits: List[Permit], blueBadge: Boolean)

final case class Permit(number: String, vehicle: Vehicle, validFrom: LocalDate, validTo: LocalDate, blueBadge: Boolean):
  def activeOn(day: LocalDate): Boolean = !day.isBefore(validFrom) && !day.isAfter(validTo)

sealed trait Decision
object Decision:
  final case class Approved(pricePence: Int, validTo: LocalDate, notes: List[String]) extends Decision
  final case class Refused(reason: String) extends Decision
  final case class NeedsEvidence(documents: List[String]) extends Decision

final case class Application(
    household: Household,
    vehicle: Vehicle,
    startDate: LocalDate,
    months: Int,
    evidence: Set[String],
    blueBadgeHolder: Boolean
)

class PermitRules(clock: Clock, zonesWithoutOffStreet: Set[String] = Set("K")):

  private val requiredEvidence = List("proof_of_address", "v5c_logbook")
  private val secondPermitSurcharge = 1.5
  private val thirdPermitSurcharge = 2.0

  def householdCap(zone: String): Int = if zonesWithoutOffStreet.contains(zone) then 3 else 2

  def decide(app: Application): Decision =
    val today = LocalDate.now(clock)
    val missing = requiredEvidence.filterNot(app.evidence.contains) ++
      (if app.blueBadgeHolder && !app.evidence.contains("blue_badge") then List("blue_badge") else Nil)

    val active = app.household.permits.filter(_.activeOn(app.startDate))
    val counted = active.filterNot(_.blueBadge)

    if app.months != 3 && app.months != 6 && app.months != 12 then
      Decision.Refused(s"permits run for 3, 6 or 12 months, not ${app.months}")
    else if app.startDate.isBefore(today) then
      Decision.Refused(s"start date ${app.startDate} is in the past")
    else if app.startDate.isAfter(today.plusDays(60)) then
      Decision.Refused("applications open 60 days before the start date")
    else if active.exists(_.vehicle.registration.equalsIgnoreCase(app.vehicle.registration)) then
      Decision.Refused(s"${app.vehicle.registration} already has a permit at this address")
    else if missing.nonEmpty then
      Decision.NeedsEvidence(missing)
    else if !app.blueBadgeHolder && counted.size >= householdCap(app.household.zone) then
      Decision.Refused(
        s"household already holds ${counted.size} permits (cap ${householdCap(app.household.zone)} in zone ${app.household.zone})"
      )
    else
      val validTo = app.startDate.plusMonths(app.months.toLong).minusDays(1)
      if app.blueBadgeHolder then Decision.Approved(0, validTo, List("blue badge: no charge, not counted"))
      else
        val (amount, notes) = price(app.vehicle, counted.size, app.months)
        Decision.Approved(amount, validTo, notes)

  /** Price in pence for a permit of `months`, given how many paid permits the household has. */
  def price(vehicle: Vehicle, alreadyHeld: Int, months: Int): (Int, List[String]) =
    val base = vehicle.band.annualPence
    val (factor, surchargeNote) = alreadyHeld match
      case 0 => (1.0, None)
      case 1 => (secondPermitSurcharge, Some("second permit: +50%"))
      case _ => (thirdPermitSurcharge, Some("third permit: +100%"))
    // short permits cost proportionally more: 3 months = 30 %, 6 months = 55 % of a year
    val periodShare = months match
      case 3  => 0.30
      case 6  => 0.55
      case 12 => 1.0
      case n  => throw IllegalArgumentException(s"unsupported period $n")
    val diesel = !vehicle.electric && vehicle.registeredOn.isBefore(LocalDate.of(2015, 9, 1))
    val dieselFactor = if diesel then 1.25 else 1.0
    val pence = roundToFivePence(base * factor * periodShare * dieselFactor)
    val notes = List(Some(s"band ${vehicle.band}"), surchargeNote, Option.when(diesel)("pre-Euro 6 surcharge: +25%")).flatten
    (pence, notes)

  private def roundToFivePence(x: Double): Int = (math.round(x / 5.0) * 5).toInt

final case class VoucherBook(serial: String, issuedOn: LocalDate, halfDays: Int = 10)

class VisitorVouchers(clock: Clock, maxBooksPerYear: Int = 12, bookPricePence: Int = 1250):

  def canBuy(issued: List[VoucherBook], count: Int): Either[String, Int] =
    val yearStart = LocalDate.now(clock).withDayOfYear(1)
    val thisYear = issued.count(b => !b.issuedOn.isBefore(yearStart))
    val left = maxBooksPerYear - thisYear
    if count <= 0 then Left("ask for at least one book")
    else if count > left then Left(s"only $left book(s) left this year")
    else Right(count * bookPricePence)

  /** A half-day voucher covers 08:00-13:00 or 13:00-18:30; outside those hours no permit is needed. */
  def halfDaysNeeded(from: ZonedDateTime, until: ZonedDateTime): Try[Int] =
    if !until.isAfter(from) then Failure(IllegalArgumentException("end must be after start"))
    else if Duration.between(from, until).toDays > 14 then Failure(IllegalArgumentException("at most 14 days at once"))
    else
      val slots = Iterator
        .iterate(from.toLocalDate)(_.plusDays(1))
        .takeWhile(!_.isAfter(until.toLocalDate))
        .flatMap { d =>
          List(
            (d.atTime(LocalTime.of(8, 0)), d.atTime(LocalTime.of(13, 0))),
            (d.atTime(LocalTime.of(13, 0)), d.atTime(LocalTime.of(18, 30)))
          )
        }
        .count { case (s, e) =>
          s.isBefore(until.toLocalDateTime) && e.isAfter(from.toLocalDateTime)
        }
      Success(slots)
