-- pathfinding.lua: A* over a tile map for the "Lanternmoor" roguelike.
--
-- The map is a 2-D array of tile kinds; each kind has a movement cost, and
-- `nil` cost means impassable. Diagonal moves are allowed only when both
-- orthogonal neighbours are passable, so creatures cannot cut corners
-- through walls.

local Pathfinding = {}

local COSTS = {
  floor = 1,
  grass = 1,
  shallow_water = 3,
  rubble = 2,
  door_open = 1,
  door_closed = 4, -- opening a door costs a few turns
  wall = nil,
  deep_water = nil,
}

local SQRT2 = math.sqrt(2)

local function key(x, y) return y * 4096 + x end

local function heuristic(ax, ay, bx, by)
  -- Octile distance: exact on an empty grid with diagonal moves.
  local dx, dy = math.abs(ax - bx), math.abs(ay - by)
  return (dx + dy) + (SQRT2 - 2) * math.min(dx, dy)
end

-- A small binary heap keyed on f-score.
local Heap = {}
Heap.__index = Heap

function Heap.new() return setmetatable({ items = {}, size = 0 }, Heap) end

function Heap:push(node)
  self.size = self.size + 1
  local i = self.size
  self.items[i] = node
  while i > 1 do
    local parent = i // 2
    if self.items[parent].f <= self.items[i].f then break end
    self.items[parent], self.items[i] = self.items[i], self.items[parent]
    i = parent
  end
end

function Heap:pop()
  if self.size == 0 then return nil end
  local top = self.items[1]
  self.items[1] = self.items[self.size]
  self.items[self.size] = nil
  self.size = self.size - 1
  local i = 1
  while true do
    local l, r, smallest = 2 * i, 2 * i + 1, i
    if l <= self.size and self.items[l].f < self.items[smallest].f then smallest = l end
    if r <= self.size and self.items[r].f < self.items[smallest].f then smallest = r end
    if smallest == i then break end
    self.items[smallest], self.items[i] = self.items[i], self.items[smallest]
    i = smallest
  end
  return top
end

local function cost_at(map, x, y)
  local row = map[y]
  if not row then return nil end
  local kind = row[x]
  return kind and COSTS[kind]
end

--- Finds the cheapest path from (sx, sy) to (gx, gy).
-- @return a list of {x, y} steps excluding the start, or nil and a reason.
function Pathfinding.find(map, sx, sy, gx, gy, max_expansions)
  max_expansions = max_expansions or 5000
  if not cost_at(map, gx, gy) then return nil, "goal is impassable" end

  local open = Heap.new()
  local g = { [key(sx, sy)] = 0 }
  local came_from = {}
  open:push({ x = sx, y = sy, f = heuristic(sx, sy, gx, gy) })

  local expansions = 0
  while open.size > 0 do
    local current = open:pop()
    if current.x == gx and current.y == gy then
      local path, k = {}, key(gx, gy)
      while came_from[k] do
        local step = came_from[k]
        table.insert(path, 1, { x = step.to_x, y = step.to_y })
        k = step.from
      end
      return path
    end
    expansions = expansions + 1
    if expansions > max_expansions then return nil, "search budget exhausted" end

    for dy = -1, 1 do
      for dx = -1, 1 do
        if not (dx == 0 and dy == 0) then
          local nx, ny = current.x + dx, current.y + dy
          local step_cost = cost_at(map, nx, ny)
          local diagonal = dx ~= 0 and dy ~= 0
          if step_cost and diagonal then
            if not (cost_at(map, current.x + dx, current.y) and cost_at(map, current.x, current.y + dy)) then
              step_cost = nil
            else
              step_cost = step_cost * SQRT2
            end
          end
          if step_cost then
            local tentative = g[key(current.x, current.y)] + step_cost
            local nk = key(nx, ny)
            if g[nk] == nil or tentative < g[nk] then
              g[nk] = tentative
              came_from[nk] = { from = key(current.x, current.y), to_x = nx, to_y = ny }
              open:push({ x = nx, y = ny, f = tentative + heuristic(nx, ny, gx, gy) })
            end
          end
        end
      end
    end
  end
  return nil, "no path"
end

return Pathfinding
