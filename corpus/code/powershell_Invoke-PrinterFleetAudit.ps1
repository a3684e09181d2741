#Requires -Version 7.2
<#
.SYNOPSIS
    Audits the office printer fleet: toner levels, page counters and queue health.

.DESCRIPTION
    Reads the printer list from a CSV (Name, Address, Site, Model), asks each
    device for its status over the print server's WMI/CIM interface and the
    device's own status page, and writes a report. Printers below the toner
    threshold get a ticket drafted in the facilities queue unless one is
    already open for the same device.

    Run weekly from the scheduled task "Fleet Audit" on PRT-SRV-02 as the
    svc-printaudit account. Nothing here changes printer settings.

.PARAMETER InventoryPath
    CSV with one printer per row.

.PARAMETER TonerThreshold
    Percentage below which a cartridge is reported as low. Default 15.

.PARAMETER WhatIf
    Draft no tickets; only print what would be filed.

.EXAMPLE
    ./Invoke-PrinterFleetAudit.ps1 -InventoryPath \\fs01\it\printers.csv -ReportPath C:\Reports\fleet.html

.NOTES
    Owner: Desktop team (Priyanka Oduya). Last reviewed 2025-04-11.
#>
[CmdletBinding(SupportsShouldProcess)]
param(
    [Parameter(Mandatory)]
    [ValidateScript({ Test-Path $_ -PathType Leaf })]
    [string] $InventoryPath,

    [string] $ReportPath = (Join-Path $env:TEMP "printer-fleet-$(Get-Date -Format yyyyMMdd).html"),

    [ValidateRange(1, 99)]
    [int] $TonerThreshold = 15,

    [string] $PrintServer = 'PRT-SRV-02',

    [string] $TicketApi = 'https://facilities.hollins-group.internal/api/v2/tickets'
)

Set-StrictMode -Version Latest
$ErrorActionPreference = 'Stop'

function Get-TonerLevels {
    [CmdletBinding()]
    param([Parameter(Mandatory)] [string] $Address)

    # The models in the fleet all serve a small XML status document; the web
    # UI scraping we did before broke on every firmware update.
    $uri = "http://$Address/DevMgmt/ConsumableStatus.xml"
    try {
        [xml] $doc = Invoke-RestMethod -Uri $uri -TimeoutSec 8
    }
    catch {
        Write-Verbose "No status document from ${Address}: $($_.Exception.Message)"
        return @()
    }
    foreach ($c in $doc.ConsumableStatus.Consumable) {
        [pscustomobject]@{
            Colour  = $c.Color
            Percent = [int] $c.PercentRemaining
            PartNo  = $c.PartNumber
        }
    }
}

function Get-QueueHealth {
    [CmdletBinding()]
    param(
        [Parameter(Mandatory)] [string] $Name,
        [Parameter(Mandatory)] [string] $Server
    )
    $printer = Get-Printer -ComputerName $Server -Name $Name -ErrorAction SilentlyContinue
    if (-not $printer) {
        return [pscustomobject]@{ Status = 'MissingQueue'; Jobs = 0; OldestJobMinutes = $null }
    }
    $jobs = @(Get-PrintJob -ComputerName $Server -PrinterName $Name -ErrorAction SilentlyContinue)
    $oldest = $null
    if ($jobs.Count -gt 0) {
        $oldest = [math]::Round(((Get-Date) - ($jobs | Measure-Object -Property SubmittedTime -Minimum).Minimum).TotalMinutes)
    }
    [pscustomobject]@{
        Status           = "$($printer.PrinterStatus)"
        Jobs             = $jobs.Count
        OldestJobMinutes = $oldest
    }
}

function New-TonerTicket {
    [CmdletBinding(SupportsShouldProcess)]
    param(
        [Parameter(Mandatory)] [pscustomobject] $Printer,
        [Parameter(Mandatory)] [object[]] $Low
    )
    $existing = Invoke-RestMethod -Uri "$TicketApi`?asset=$([uri]::EscapeDataString($Printer.Name))&state=open" -UseDefaultCredentials
    if ($existing.items.Count -gt 0) {
        Write-Verbose "Ticket $($existing.items[0].id) already open for $($Printer.Name)"
        return $existing.items[0].id
    }
    $body = @{
        title    = "Toner low: $($Printer.Name) ($($Printer.Site))"
        category = 'printing/consumables'
        asset    = $Printer.Name
        details  = ($Low | ForEach-Object { "$($_.Colour): $($_.Percent)% (part $($_.PartNo))" }) -join "`n"
    } | ConvertTo-Json

    if ($PSCmdlet.ShouldProcess($Printer.Name, 'File toner ticket')) {
        $created = Invoke-RestMethod -Method Post -Uri $TicketApi -Body $body -ContentType 'application/json' -UseDefaultCredentials
        return $created.id
    }
}

# --- main -------------------------------------------------------------------

$inventory = Import-Csv -Path $InventoryPath
Write-Host "Auditing $($inventory.Count) printers via $PrintServer"

$results = foreach ($p in $inventory) {
    $online = Test-Connection -TargetName $p.Address -Count 1 -Quiet -TimeoutSeconds 2
    $toner = if ($online) { @(Get-TonerLevels -Address $p.Address) } else { @() }
    $queue = Get-QueueHealth -Name $p.Name -Server $PrintServer
    $low = @($toner | Where-Object Percent -lt $TonerThreshold)

    $ticket = $null
    if ($low.Count -gt 0) {
        $ticket = New-TonerTicket -Printer $p -Low $low
    }

    [pscustomobject]@{
        Name       = $p.Name
        Site       = $p.Site
        Model      = $p.Model
        Online     = $online
        Queue      = $queue.Status
        Jobs       = $queue.Jobs
        StuckMins  = $queue.OldestJobMinutes
        LowToner   = ($low | ForEach-Object { '{0} {1}%' -f $_.Colour, $_.Percent }) -join ', '
        Ticket     = $ticket
    }
}

$stuck = @($results | Where-Object { $_.StuckMins -gt 30 })
$offline = @($results | Where-Object { -not $_.Online })

$style = @'
<style>
 body { font-family: Segoe UI, sans-serif; font-size: 13px; }
 table { border-collapse: collapse; }
 td, th { border: 1px solid #ccc; padding: 3px 8px; }
 th { background: #eef2f6; }
</style>
'@

$results |
    Sort-Object Site, Name |
    ConvertTo-Html -Head $style -Title 'Printer fleet audit' `
        -PreContent "<h2>Printer fleet audit $(Get-Date -Format 'yyyy-MM-dd HH:mm')</h2><p>$($offline.Count) offline, $($stuck.Count) with stuck jobs, threshold $TonerThreshold%.</p>" |
    Set-Content -Path $ReportPath -Encoding utf8

Write-Host "Report written to $ReportPath"
if ($offline.Count -gt 0) {
    Write-Warning ("Offline: " + ($offline.Name -join ', '))
}

# Pester tests live in tests/PrinterFleetAudit.Tests.ps1; the toner parser is
# tested there against saved status documents from each model in the fleet.
