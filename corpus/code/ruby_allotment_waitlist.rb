# frozen_string_literal: true

require "date"
require "set"

module Allotments
  # Waiting list for the council's allotment plots.
  #
  # Applicants join the list for one or more sites. When a plot falls
  # vacant, it is offered to the applicant who has waited longest for that
  # site, with two exceptions agreed by the committee in 2023:
  #
  #   * residents of the ward the site is in go before non-residents;
  #   * an applicant who has turned down two offers drops to the back of
  #     every list they are on.
  #
  # An offer is held for 14 days. Unanswered offers count as refusals.
  class Waitlist
    OFFER_HOLD_DAYS = 14
    MAX_REFUSALS = 2

    Applicant = Struct.new(:id, :name, :email, :ward, :joined_on, :sites, :refusals,
                           keyword_init: true) do
      def resident_of?(site)
        ward == site.ward
      end
    end

    Site = Struct.new(:code, :name, :ward, keyword_init: true)

    Offer = Struct.new(:applicant_id, :site_code, :plot, :made_on, :status, keyword_init: true) do
      def expires_on
        made_on + OFFER_HOLD_DAYS
      end

      def open?
        status == :open
      end
    end

    class Error < StandardError; end
    class UnknownSite < Error; end
    class AlreadyOffered < Error; end

    attr_reader :offers

    def initialize(sites, clock: -> { Date.today })
      @sites = sites.to_h { |s| [s.code, s] }
      @applicants = {}
      @offers = []
      @clock = clock
      @next_id = 1
    end

    # Adds an applicant and returns their id. Sites are given by code.
    def join(name:, email:, ward:, sites:, joined_on: today)
      unknown = sites.reject { |code| @sites.key?(code) }
      raise UnknownSite, "unknown site(s): #{unknown.join(', ')}" unless unknown.empty?

      id = @next_id
      @next_id += 1
      @applicants[id] = Applicant.new(
        id: id, name: name, email: email.strip.downcase, ward: ward,
        joined_on: joined_on, sites: Set.new(sites), refusals: 0
      )
      id
    end

    def leave(id)
      @applicants.delete(id) or raise Error, "no applicant #{id}"
      @offers.each { |o| o.status = :withdrawn if o.applicant_id == id && o.open? }
    end

    # The queue for one site, in offer order.
    def queue_for(site_code)
      site = @sites.fetch(site_code) { raise UnknownSite, site_code }
      waiting = @applicants.values.select { |a| a.sites.include?(site_code) && !holds_open_offer?(a.id) }
      waiting.sort_by do |a|
        [
          a.refusals >= MAX_REFUSALS ? 1 : 0,   # repeat refusers last
          a.resident_of?(site) ? 0 : 1,         # residents first
          a.joined_on,                          # then longest wait
          a.id                                  # stable tie-break
        ]
      end
    end

    # Position (1-based) of an applicant on a site's list, or nil.
    def position(applicant_id, site_code)
      idx = queue_for(site_code).index { |a| a.id == applicant_id }
      idx && idx + 1
    end

    # A plot has fallen vacant: offer it to the head of the queue.
    def offer_plot(site_code, plot)
      expire_old_offers!
      if @offers.any? { |o| o.open? && o.site_code == site_code && o.plot == plot }
        raise AlreadyOffered, "#{site_code}/#{plot} is already on offer"
      end

      head = queue_for(site_code).first or return nil
      offer = Offer.new(applicant_id: head.id, site_code: site_code, plot: plot,
                        made_on: today, status: :open)
      @offers << offer
      offer
    end

    # Applicant accepts: they leave every list, the offer closes.
    def accept(offer)
      check_open!(offer)
      offer.status = :accepted
      @applicants.delete(offer.applicant_id)
      offer
    end

    # Applicant refuses: the refusal is counted and the plot goes to the next.
    def refuse(offer)
      check_open!(offer)
      offer.status = :refused
      applicant = @applicants[offer.applicant_id]
      applicant.refusals += 1 if applicant
      offer_plot(offer.site_code, offer.plot)
    end

    # Offers past their hold period become refusals. Returns the new offers
    # made for the plots that were released.
    def expire_old_offers!
      expired = @offers.select { |o| o.open? && today > o.expires_on }
      expired.filter_map do |o|
        o.status = :expired
        a = @applicants[o.applicant_id]
        a.refusals += 1 if a
        offer_plot(o.site_code, o.plot)
      end
    end

    # A line per site for the committee's monthly report.
    def summary
      @sites.values.sort_by(&:code).map do |site|
        q = queue_for(site.code)
        residents = q.count { |a| a.resident_of?(site) }
        oldest = q.map(&:joined_on).min
        wait = oldest ? "#{((today - oldest).to_i / 30.4).round} months" : "-"
        format("%-6s %-24s %3d waiting (%3d residents), longest wait %s",
               site.code, site.name, q.size, residents, wait)
      end
    end

    private

    def today
      @clock.call
    end

    def holds_open_offer?(applicant_id)
      @offers.any? { |o| o.open? && o.applicant_id == applicant_id }
    end

    def check_open!(offer)
      raise Error, "offer is #{offer.status}, not open" unless offer.open?
    end
  end
end

if $PROGRAM_NAME == __FILE__
  require "minitest/autorun"

  class WaitlistTest < Minitest::Test
    Site = Allotments::Waitlist::Site

    def setup
      @day = Date.new(2025, 3, 1)
      sites = [Site.new(code: "BRK", name: "Brookside Lane", ward: "Eastfield"),
               Site.new(code: "MLH", name: "Mill Hill", ward: "Northgate")]
      @list = Allotments::Waitlist.new(sites, clock: -> { @day })
      @old = @list.join(name: "R. Okafor", email: "r.okafor@example.org", ward: "Northgate",
                        sites: %w[BRK], joined_on: Date.new(2021, 6, 2))
      @local = @list.join(name: "J. Lindqvist", email: " JL@example.org", ward: "Eastfield",
                          sites: %w[BRK MLH], joined_on: Date.new(2023, 1, 9))
    end

    def test_residents_go_first
      assert_equal [@local, @old], @list.queue_for("BRK").map(&:id)
    end

    def test_unanswered_offer_expires_and_moves_on
      offer = @list.offer_plot("BRK", "14b")
      assert_equal @local, offer.applicant_id
      @day += 15
      @list.expire_old_offers!
      assert_equal :expired, offer.status
      assert_equal @old, @list.offers.last.applicant_id
    end

    def test_two_refusals_send_to_back
      first = @list.offer_plot("BRK", "3a")       # to the resident
      second = @list.refuse(first)                # to R. Okafor
      third = @list.refuse(second)                # back to the resident
      assert_equal @old, @list.refuse(third).applicant_id
      late = @list.join(name: "P. Ahn", email: "pahn@example.org", ward: "Westbury",
                        sites: %w[BRK], joined_on: Date.new(2024, 11, 20))
      assert_equal [late, @local], @list.queue_for("BRK").map(&:id)
    end
  end
end
