package org.fernhollow.irrigation

import java.time.Duration
import java.time.LocalTime
import java.util.concurrent.ConcurrentHashMap
import kotlin.math.max
import kotlin.math.roundToInt

/**
 * Decides how long each greenhouse bed is watered in the next cycle.
 *
 * Soil probes report volumetric water content (VWC) in percent; a bed is
 * watered when its smoothed reading falls below the crop's threshold and
 * the tank holds enough water for every bed that asked.
 */
data class Bed(val id: String, val crop: Crop, val areaSquareMetres: Double)

enum class Crop(val thresholdVwc: Double, val litresPerSquareMetre: Double) {
    TOMATO(28.0, 4.5),
    BASIL(32.0, 3.0),
    LETTUCE(35.0, 2.5),
    PEPPER(27.0, 4.0),
}

data class ProbeReading(val bedId: String, val vwc: Double, val at: LocalTime)

sealed interface Decision {
    data class Water(val bed: Bed, val litres: Int, val valveOpen: Duration) : Decision
    data class Skip(val bed: Bed, val reason: String) : Decision
}

class IrrigationScheduler(
    private val beds: List<Bed>,
    private val valveLitresPerMinute: Double = 12.0,
    private val smoothing: Double = 0.3,
) {
    private val smoothed = ConcurrentHashMap<String, Double>()

    fun record(reading: ProbeReading) {
        require(reading.vwc in 0.0..100.0) { "VWC out of range for ${reading.bedId}: ${reading.vwc}" }
        smoothed.merge(reading.bedId, reading.vwc) { old, new -> old + smoothing * (new - old) }
    }

    fun plan(tankLitres: Int, quietHours: ClosedRange<LocalTime>, now: LocalTime): List<Decision> {
        if (now in quietHours) {
            return beds.map { Decision.Skip(it, "quiet hours until ${quietHours.endInclusive}") }
        }
        val wanted = beds.associateWith { bed ->
            val vwc = smoothed[bed.id] ?: return@associateWith 0
            val deficit = max(0.0, bed.crop.thresholdVwc - vwc) / bed.crop.thresholdVwc
            (deficit * bed.crop.litresPerSquareMetre * bed.areaSquareMetres * 4).roundToInt()
        }
        val total = wanted.values.sum()
        val scale = if (total > tankLitres && total > 0) tankLitres.toDouble() / total else 1.0
        return beds.map { bed ->
            val litres = ((wanted[bed] ?: 0) * scale).roundToInt()
            when {
                smoothed[bed.id] == null -> Decision.Skip(bed, "no probe reading yet")
                litres == 0 -> Decision.Skip(bed, "moist enough (${"%.1f".format(smoothed[bed.id])} %)")
                else -> Decision.Water(bed, litres, valveTime(litres))
            }
        }
    }

    private fun valveTime(litres: Int): Duration =
        Duration.ofSeconds((litres / valveLitresPerMinute * 60).roundToInt().toLong())
}

fun main() {
    val beds = listOf(
        Bed("north-1", Crop.TOMATO, 6.0),
        Bed("north-2", Crop.PEPPER, 4.5),
        Bed("south-1", Crop.BASIL, 2.0),
        Bed("south-2", Crop.LETTUCE, 3.2),
    )
    val scheduler = IrrigationScheduler(beds)
    listOf(
        ProbeReading("north-1", 22.4, LocalTime.of(5, 40)),
        ProbeReading("north-2", 29.1, LocalTime.of(5, 41)),
        ProbeReading("south-1", 24.8, LocalTime.of(5, 41)),
        ProbeReading("north-1", 21.9, LocalTime.of(5, 55)),
    ).forEach(scheduler::record)

    val quiet = LocalTime.of(22, 0)..LocalTime.of(23, 59)
    for (decision in scheduler.plan(tankLitres = 40, quietHours = quiet, now = LocalTime.of(6, 0))) {
        when (decision) {
            is Decision.Water -> println("water ${decision.bed.id}: ${decision.litres} L, valve ${decision.valveOpen.seconds} s")
            is Decision.Skip -> println("skip  ${decision.bed.id}: ${decision.reason}")
        }
    }
}
