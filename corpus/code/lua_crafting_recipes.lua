-- crafting.lua
-- Recipe book and crafting queue for the survival game's workbench.
--
-- Recipes are plain tables loaded from data/recipes.lua. An inventory is a
-- table of item id -> count. Crafting checks the inputs, reserves them, and
-- queues the job; the game loop calls Crafting.update(dt) each frame and the
-- outputs land in the inventory when the timer runs out.

local Crafting = {}
Crafting.__index = Crafting

local floor, max, min = math.floor, math.max, math.min

-- Skill levels shorten crafting time: 5 % per level, never below 40 %.
local SPEED_PER_LEVEL = 0.05
local MIN_TIME_FACTOR = 0.40

--- Creates a workbench.
-- @param recipes  array of recipe tables { id, station, time, inputs, outputs, skill }
-- @param inventory  table item_id -> count, shared with the player
-- @param opts  optional { station = "workbench", max_queue = 5 }
function Crafting.new(recipes, inventory, opts)
  opts = opts or {}
  local self = setmetatable({}, Crafting)
  self.station = opts.station or "workbench"
  self.max_queue = opts.max_queue or 5
  self.inventory = inventory
  self.queue = {}
  self.by_id = {}
  self.by_output = {}
  for _, r in ipairs(recipes) do
    assert(type(r.id) == "string", "recipe without id")
    assert(self.by_id[r.id] == nil, "duplicate recipe " .. r.id)
    self.by_id[r.id] = r
    for item in pairs(r.outputs) do
      local list = self.by_output[item] or {}
      list[#list + 1] = r
      self.by_output[item] = list
    end
  end
  return self
end

--- How many times the recipe could be crafted with what is in the bag.
function Crafting:max_crafts(recipe)
  local n = math.huge
  for item, need in pairs(recipe.inputs) do
    local have = self.inventory[item] or 0
    n = min(n, floor(have / need))
  end
  return n == math.huge and 0 or n
end

--- Lists what is missing for `times` crafts, as { item = shortfall }.
function Crafting:missing(recipe, times)
  times = times or 1
  local out, any = {}, false
  for item, need in pairs(recipe.inputs) do
    local short = need * times - (self.inventory[item] or 0)
    if short > 0 then
      out[item] = short
      any = true
    end
  end
  return any and out or nil
end

local function take(inv, items, times)
  for item, need in pairs(items) do
    local left = (inv[item] or 0) - need * times
    inv[item] = left > 0 and left or nil
  end
end

local function give(inv, items, times)
  for item, count in pairs(items) do
    inv[item] = (inv[item] or 0) + count * times
  end
end

--- Queues a craft. Returns true, or false and a reason string.
-- Inputs are taken out of the inventory at once so that the player cannot
-- spend them twice; cancel() gives them back.
function Crafting:start(recipe_id, times, skill_level)
  local r = self.by_id[recipe_id]
  if not r then
    return false, "unknown recipe"
  end
  if r.station ~= self.station then
    return false, "needs a " .. r.station
  end
  if #self.queue >= self.max_queue then
    return false, "queue full"
  end
  times = max(1, floor(times or 1))
  local lack = self:missing(r, times)
  if lack then
    local parts = {}
    for item, short in pairs(lack) do
      parts[#parts + 1] = short .. "x " .. item
    end
    table.sort(parts)
    return false, "missing " .. table.concat(parts, ", ")
  end
  if (skill_level or 0) < (r.skill or 0) then
    return false, ("needs skill %d"):format(r.skill)
  end

  take(self.inventory, r.inputs, times)
  local factor = max(MIN_TIME_FACTOR, 1 - SPEED_PER_LEVEL * (skill_level or 0))
  self.queue[#self.queue + 1] = {
    recipe = r,
    times = times,
    left = r.time * times * factor,
  }
  return true
end

--- Cancels the job at position i and refunds its inputs in full.
function Crafting:cancel(i)
  local job = table.remove(self.queue, i)
  if job then
    give(self.inventory, job.recipe.inputs, job.times)
  end
  return job ~= nil
end

--- Advances the first job in the queue. Only one job runs at a time.
-- Returns the recipe id when a job finishes this frame, so the UI can
-- play a sound and show a toast.
function Crafting:update(dt)
  local job = self.queue[1]
  if not job then
    return nil
  end
  job.left = job.left - dt
  if job.left > 0 then
    return nil
  end
  table.remove(self.queue, 1)
  give(self.inventory, job.recipe.outputs, job.times)
  -- Carry the overshoot into the next job so long frames do not lose time.
  local nxt = self.queue[1]
  if nxt then
    nxt.left = nxt.left + job.left
  end
  return job.recipe.id
end

--- Resolves the full tree of base materials for an item, for the tooltip
-- "needs 6 planks (= 2 logs)". Picks the first recipe for each
-- intermediate item and stops at items no recipe produces.
function Crafting:base_materials(item, count, seen)
  seen = seen or {}
  local recipes = self.by_output[item]
  if not recipes or seen[item] then
    return { [item] = count }
  end
  seen[item] = true
  local r = recipes[1]
  local per = r.outputs[item]
  local runs = math.ceil(count / per)
  local total = {}
  for input, need in pairs(r.inputs) do
    for base, n in pairs(self:base_materials(input, need * runs, seen)) do
      total[base] = (total[base] or 0) + n
    end
  end
  seen[item] = nil
  return total
end

-- A short self-check, run with `lua crafting.lua`.
if not pcall(debug.getlocal, 4, 1) then
  local recipes = {
    { id = "planks", station = "workbench", time = 2, inputs = { log = 1 }, outputs = { plank = 4 } },
    { id = "stick", station = "workbench", time = 1, inputs = { plank = 2 }, outputs = { stick = 4 } },
    { id = "torch", station = "workbench", time = 1.5, inputs = { stick = 1, resin = 1 }, outputs = { torch = 2 } },
  }
  local bag = { log = 3, resin = 2 }
  local bench = Crafting.new(recipes, bag)
  assert(bench:start("planks", 3, 2))
  while bench:update(0.5) == nil do end
  assert(bag.plank == 12 and bag.log == nil)
  local ok, why = bench:start("torch", 1, 0)
  assert(not ok and why == "missing 1x stick")
  local base = bench:base_materials("torch", 4)
  assert(base.log == 1 and base.resin == 2, "torch base materials")
  print("crafting: ok")
end

return Crafting
