defmodule Cantoria.Rota do
  @moduledoc """
  Builds the monthly rota for a community choir: who sings which service,
  who brings the tea, and who is resting.

  Singers declare the dates they cannot attend. Every service needs at
  least two voices per part (soprano, alto, tenor, bass); nobody sings
  more than three services in a row, and tea duty rotates fairly.
  """

  alias Cantoria.{Singer, Service}

  @parts [:soprano, :alto, :tenor, :bass]
  @min_per_part 2
  @max_streak 3

  @type assignment :: %{service: Service.t(), voices: %{atom() => [Singer.t()]}, tea: Singer.t() | nil}

  @spec build([Service.t()], [Singer.t()]) :: {:ok, [assignment()]} | {:error, [String.t()]}
  def build(services, singers) do
    {assignments, _streaks, problems} =
      services
      |> Enum.sort_by(& &1.date, Date)
      |> Enum.reduce({[], %{}, []}, fn service, {acc, streaks, problems} ->
        available = Enum.filter(singers, &available?(&1, service, streaks))
        voices = Map.new(@parts, fn part -> {part, pick(available, part)} end)

        short =
          for {part, chosen} <- voices, length(chosen) < @min_per_part do
            "#{Date.to_iso8601(service.date)}: only #{length(chosen)} #{part}(s)"
          end

        singing = voices |> Map.values() |> List.flatten()
        tea = pick_tea(singers -- singing, acc)
        {[%{service: service, voices: voices, tea: tea} | acc], update_streaks(streaks, singers, singing), short ++ problems}
      end)

    case problems do
      [] -> {:ok, Enum.reverse(assignments)}
      _ -> {:error, Enum.reverse(problems)}
    end
  end

  defp available?(%Singer{} = singer, %Service{date: date}, streaks) do
    date not in singer.away and Map.get(streaks, singer.id, 0) < @max_streak
  end

  defp pick(available, part) do
    available
    |> Enum.filter(&(&1.part == part))
    |> Enum.sort_by(&{&1.services_sung, &1.name})
    |> Enum.take(@min_per_part + 1)
  end

  defp pick_tea([], _acc), do: nil

  defp pick_tea(candidates, acc) do
    counts = acc |> Enum.map(& &1.tea) |> Enum.reject(&is_nil/1) |> Enum.frequencies_by(& &1.id)
    Enum.min_by(candidates, &{Map.get(counts, &1.id, 0), &1.name})
  end

  defp update_streaks(streaks, singers, singing) do
    ids = MapSet.new(singing, & &1.id)

    Map.new(singers, fn %Singer{id: id} ->
      if MapSet.member?(ids, id), do: {id, Map.get(streaks, id, 0) + 1}, else: {id, 0}
    end)
  end
end
