# frozen_string_literal: true

# Overdue fines for the Marlow Street lending library.
#
# Rules, as agreed by the trustees in March:
#   * adult books: 20p a day, capped at the replacement price
#   * children's books: no fines, ever
#   * DVDs and games: £1 a day from the first day, capped at £10
#   * days the branch is closed (Sundays, bank holidays) are not counted
#   * a member with a "hardship" flag pays half, rounded down to the penny
#
# Amounts are kept in pence (Integer) throughout; only #format_pence turns
# them into text.

require "date"
require "set"

module Marlow
  Item = Struct.new(:barcode, :title, :category, :replacement_pence, keyword_init: true)
  Loan = Struct.new(:item, :member, :due_on, :returned_on, keyword_init: true)
  Member = Struct.new(:card_number, :name, :hardship, keyword_init: true) do
    def hardship? = hardship == true
  end

  class FineCalculator
    DAILY_RATE = {
      adult: 20,
      children: 0,
      media: 100
    }.freeze

    MEDIA_CAP = 1_000

    def initialize(bank_holidays: [])
      @closed = bank_holidays.map { |d| Date.parse(d.to_s) }.to_set
    end

    # Fine in pence for one loan, as of +today+ when the item is still out.
    def fine_for(loan, today: Date.today)
      rate = DAILY_RATE.fetch(loan.item.category) do
        raise ArgumentError, "unknown category #{loan.item.category.inspect} for #{loan.item.barcode}"
      end
      return 0 if rate.zero?

      end_date = loan.returned_on || today
      days = chargeable_days(loan.due_on, end_date)
      amount = days * rate
      amount = [amount, cap_for(loan.item)].min
      amount /= 2 if loan.member.hardship?
      amount
    end

    # Sum over all of a member's loans, with a line per loan that costs something.
    def statement(member, loans, today: Date.today)
      lines = loans
        .select { |l| l.member.card_number == member.card_number }
        .map { |l| [l, fine_for(l, today: today)] }
        .reject { |(_, pence)| pence.zero? }
        .sort_by { |(l, _)| l.due_on }

      total = lines.sum { |(_, pence)| pence }
      body = lines.map do |(loan, pence)|
        format("%-14s %-32.32s due %s  %8s", loan.item.barcode, loan.item.title,
               loan.due_on.strftime("%d %b"), format_pence(pence))
      end
      [*body, format("%-62s %8s", "Total", format_pence(total))].join("\n")
    end

    def format_pence(pence)
      pounds, rest = pence.divmod(100)
      format("£%d.%02d", pounds, rest)
    end

    private

    def chargeable_days(due_on, end_date)
      return 0 unless end_date > due_on

      ((due_on + 1)..end_date).count { |d| !d.sunday? && !@closed.include?(d) }
    end

    def cap_for(item)
      case item.category
      when :media then MEDIA_CAP
      else item.replacement_pence
      end
    end
  end
end

if $PROGRAM_NAME == __FILE__
  require "minitest/autorun"

  class FineCalculatorTest < Minitest::Test
    def setup
      @calc = Marlow::FineCalculator.new(bank_holidays: ["2025-05-05", "2025-05-26"])
      @ada = Marlow::Member.new(card_number: "M-40417", name: "Ada Pennock", hardship: false)
      @joss = Marlow::Member.new(card_number: "M-40988", name: "Joss Feary", hardship: true)
      @novel = Marlow::Item.new(barcode: "B0091734", title: "The Salt Road Winter",
                                category: :adult, replacement_pence: 899)
      @picture = Marlow::Item.new(barcode: "B0120455", title: "Moth and the Moon Lamp",
                                  category: :children, replacement_pence: 650)
      @dvd = Marlow::Item.new(barcode: "D0003311", title: "Canal Boats of the North (DVD)",
                              category: :media, replacement_pence: 1_499)
    end

    def loan(item, member, due, returned = nil)
      Marlow::Loan.new(item: item, member: member, due_on: Date.parse(due),
                       returned_on: returned && Date.parse(returned))
    end

    def test_returned_on_time_costs_nothing
      assert_equal 0, @calc.fine_for(loan(@novel, @ada, "2025-05-10", "2025-05-10"))
    end

    def test_sundays_and_bank_holidays_are_skipped
      # due Sat 3 May, back Wed 7 May: Sun 4 and Mon 5 (holiday) skipped -> Tue, Wed
      assert_equal 40, @calc.fine_for(loan(@novel, @ada, "2025-05-03", "2025-05-07"))
    end

    def test_adult_fine_is_capped_at_replacement_price
      fine = @calc.fine_for(loan(@novel, @ada, "2025-01-06", "2025-06-30"))
      assert_equal 899, fine
    end

    def test_children_never_pay
      assert_equal 0, @calc.fine_for(loan(@picture, @ada, "2025-02-01", "2025-04-01"))
    end

    def test_media_cap_and_hardship_halving
      assert_equal 1_000, @calc.fine_for(loan(@dvd, @ada, "2025-03-01", "2025-04-30"))
      assert_equal 500, @calc.fine_for(loan(@dvd, @joss, "2025-03-01", "2025-04-30"))
    end

    def test_hardship_rounds_down
      # 3 chargeable days of a DVD = 300p, halved = 150p; 1 adult day = 20p -> 10p
      assert_equal 10, @calc.fine_for(loan(@novel, @joss, "2025-05-08", "2025-05-09"))
    end

    def test_item_still_out_uses_today
      fine = @calc.fine_for(loan(@dvd, @ada, "2025-05-20"), today: Date.parse("2025-05-24"))
      assert_equal 400, fine
    end

    def test_unknown_category_raises
      odd = Marlow::Item.new(barcode: "X1", title: "Laminated map", category: :ephemera,
                             replacement_pence: 0)
      error = assert_raises(ArgumentError) { @calc.fine_for(loan(odd, @ada, "2025-05-01")) }
      assert_match(/ephemera/, error.message)
    end

    def test_statement_lists_only_costly_loans_and_a_total
      loans = [
        loan(@novel, @ada, "2025-05-03", "2025-05-07"),
        loan(@picture, @ada, "2025-05-01", "2025-05-20"),
        loan(@dvd, @ada, "2025-05-12", "2025-05-14"),
        loan(@dvd, @joss, "2025-05-12", "2025-05-14")
      ]
      text = @calc.statement(@ada, loans, today: Date.parse("2025-06-01"))
      assert_equal 3, text.lines.count
      assert_includes text, "£0.40"
      assert_includes text, "£2.00"
      assert_match(/Total\s+£2\.40\z/, text)
    end
  end
end
